import { invalidInput, notFound } from '../shared/errors';
import type { PeopleRepository } from '../people/ports';
import type { Principal, Scope } from '../shared/principal';
import type { ReviewRepository } from './ports';
import type { DecisionRecord, ReviewFilters, ReviewOrder, ReviewPage, ReviewRecord } from './records';
import { scopeOf } from '../shared/scope';
import type { Workflows } from '../workflows/workflows';
import type { OrganizationRouting } from '../routing/organization-rules';

export interface ReadReviewsOptions {
  reviews: Pick<ReviewRepository, 'findById' | 'list'>;
  /** An organization's people: "Mine" is theirs and their teams' (hosted edition). */
  people?: Pick<PeopleRepository, 'findUser' | 'teamNamesOf'>;
  /** Approval workflows: a governed review is read with its progress (hosted edition). */
  workflows?: Pick<Workflows, 'withProgress' | 'summary'>;
  /** Auto-decide rules: a review is read with the mark one left on it (hosted edition). */
  marks?: Pick<OrganizationRouting, 'withMarks'>;
}

/** Reading reviews: one, a page of them, a decision, whose they are. */
export class ReadReviews {
  constructor(private readonly options: ReadReviewsOptions) {}

  async get(scope: Scope, id: number): Promise<ReviewRecord> {
    const review = await this.options.reviews.findById(scope, id);
    if (!review) throw notFound('review', id);
    return (await this.withWorkflows(scope, [review]))[0];
  }

  async list(scope: Scope, filters: ReviewFilters, page: number, pageSize: number, order: ReviewOrder = 'newest'): Promise<ReviewPage> {
    const { organization_id: organizationId, ...rest } = filters;
    checkFilterText(rest);
    const { reviews, total } = await this.options.reviews.list(scopeOf(scope, organizationId), rest, page, pageSize, order);
    return { reviews: await this.withWorkflows(scope, reviews), total, page, page_size: pageSize };
  }

  /** The decision, or null while the review is pending. */
  async decision(scope: Scope, reviewId: number): Promise<DecisionRecord | null> {
    return (await this.get(scope, reviewId)).decision;
  }

  /**
   * "Mine" for a signed-in person: reviews assigned to them (by e-mail) or to a team they are
   * in. A key stands for no person: 400.
   */
  async assignmentsOf(principal: Principal): Promise<NonNullable<ReviewFilters['assigned_to_any']>> {
    const people = this.options.people;
    const user = principal.user && people ? await people.findUser(principal.scope.organizationId as number, principal.user.id) : null;
    if (!user || !people) throw invalidInput('mine', 'is for a person signed in to the dashboard; an API key filters with assigned_to');
    return { people: [user.email], teams: await people.teamNamesOf(user.id) };
  }

  /** Where the approval workflow of an organization's review stood, in words; null without one. */
  workflowSummary(organizationId: number | null, reviewId: number): Promise<string | null> {
    return organizationId === null || !this.options.workflows ? Promise.resolve(null) : this.options.workflows.summary(reviewId);
  }

  /** Reviews of an organization with their workflows' progress, where one governs them. */
  private async withWorkflows(scope: Scope, reviews: ReviewRecord[]): Promise<ReviewRecord[]> {
    const governed = this.options.workflows ? await this.options.workflows.withProgress(scope.organizationId, reviews) : reviews;
    return this.options.marks ? this.options.marks.withMarks(scope.organizationId, governed) : governed;
  }
}

/**
 * Sequelize's SQLite dialect writes filter values into the SQL text, escaping quotes but not
 * NUL, which SQLite takes for the end of the statement.
 */
function checkFilterText(filters: ReviewFilters): void {
  for (const [name, value] of Object.entries(filters)) {
    if (typeof value === 'string' && value.includes('\u0000')) throw invalidInput(name, 'must not contain the NUL character');
  }
}
