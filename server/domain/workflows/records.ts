/** Approval workflows and the votes they collect (hosted edition). */

import type { WorkflowStage } from './voting';

export interface WorkflowRecord {
  id: number;
  organization_id: number;
  name: string;
  /** Which reviews it governs, in the routing rules' condition language; none: every review. */
  conditions: Record<string, unknown>;
  stages: WorkflowStage[];
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

export type WorkflowFields = Pick<WorkflowRecord, 'name' | 'conditions' | 'stages' | 'is_active'>;
