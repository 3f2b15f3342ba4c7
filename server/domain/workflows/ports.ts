/** What approval workflows need from the world (hosted edition). */

import type { Tx } from '../shared/unit-of-work';
import type { Voter, WorkflowState } from './voting';
import type { WorkflowFields, WorkflowRecord } from './records';

/** An organization's approval workflows, and the state of the reviews they govern (hosted edition). */
export interface WorkflowRepository {
  insert(tx: Tx, organizationId: number, workflow: WorkflowFields, now: number): Promise<WorkflowRecord>;
  /** Oldest first: the order in which they are matched against a new review. */
  list(organizationId: number, tx?: Tx): Promise<WorkflowRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<WorkflowRecord | null>;
  update(tx: Tx, organizationId: number, id: number, workflow: WorkflowFields, now: number): Promise<WorkflowRecord | null>;
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  /** A review's workflow state, its row held until the transaction ends (PostgreSQL: FOR UPDATE); null when none governs it. */
  lockState(tx: Tx, organizationId: number, reviewId: number): Promise<WorkflowState | null>;
  saveState(tx: Tx, reviewId: number, organizationId: number, state: WorkflowState, now: number, isNew: boolean): Promise<void>;
  statesOf(reviewIds: readonly number[]): Promise<Map<number, WorkflowState>>;
  /** The organization's active people, with their role and teams: who may vote. */
  voters(organizationId: number, tx?: Tx): Promise<Voter[]>;
}
