import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttachmentRecord, type DecisionInput, type DecisionRecord, DECISION_TYPES, type ReviewInput, type ReviewRecord, STATUS_AFTER, URGENCIES } from '../../server/domain/reviews/records';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { eventually } from '../support/server';
import { makeTempDir } from '../support/temp';
import { Tally, writeFigures } from './support/figures';
import { fileUpload } from './support/multipart';
import { everyReviewListed, partialUploads } from './support/stored';
import { jsonOf, jsonRequest, type RawRequest, type RawResponse, send } from '../support/raw-http';

const ROUNDS = 20;
const WORKERS = 8;
const KILL_AFTER_MS = { min: 50, max: 400 };
const MAX_UPLOAD_BYTES = 256 * 1024;
/** The server's default `max_attachments_per_review`. */
const MAX_UPLOADS_PER_REVIEW = 20;

type ProblemKind = 'restart' | 'lost' | 'half-present' | 'orphaned';

interface Problem {
  round: number | 'final';
  kind: ProblemKind;
  message: string;
}

interface Round {
  round: number;
  kill_after_ms: number;
  in_flight_at_kill: number;
  acknowledged: { creates: number; decisions: number; uploads: number };
}

/**
 * What the client side knows: everything it sent, and what the server acknowledged. A row the
 * server holds must be one of the requests sent, whole; a row it acknowledged must be there.
 */
class Ledger {
  /** Create bodies sent, by their unique proposed_action. */
  readonly createsSent = new Map<string, ReviewInput>();
  /** Reviews answered 201, as answered. */
  readonly reviews = new Map<number, ReviewRecord>();
  /** Decisions sent, by review id, with the record once answered 200. */
  readonly decisions = new Map<number, { sent: DecisionInput; acknowledged?: DecisionRecord }>();
  /** Sizes of the uploads sent, by review id and SHA-256 of the bytes. */
  readonly uploadsSent = new Map<number, Map<string, number>>();
  /** Attachments answered 201, as answered. */
  readonly attachments = new Map<number, AttachmentRecord>();
  /** Attachments whose bytes were read back intact after a restart. */
  readonly bytesVerified = new Set<number>();
}

const random = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[random(0, items.length - 1)];
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

let temp: ReturnType<typeof makeTempDir>;
let port: number;
let server: RunningCli | undefined;
const ledger = new Ledger();
const rounds: Round[] = [];
const problems: Problem[] = [];
/** Statuses of the load's requests that were answered before the kill. */
const answered = new Tally();
/** Files under attachments/ that no attachment refers to, so far. */
let orphanedFiles = 0;

const dataDir = (): string => path.join(temp.dir, 'greenlight-data');

function start(): Promise<RunningCli> {
  return startCli(['--api-only', '--port', String(port)], { cwd: temp.dir });
}

/** One load round: creates, decisions and uploads from several workers until the kill. */
class Load {
  readonly acknowledged = { creates: 0, decisions: 0, uploads: 0 };
  inFlight = 0;
  killed = false;
  private sent = 0;

  constructor(
    private readonly url: string,
    private readonly round: number,
  ) {}

  async worker(): Promise<void> {
    while (!this.killed) {
      const action = pick(['create', 'create', 'decide', 'upload'] as const);
      this.inFlight += 1;
      // Requests cut off by the kill fail; only what was acknowledged must survive.
      await this[action]().catch(() => undefined);
      this.inFlight -= 1;
    }
  }

  private async request(request: RawRequest): Promise<RawResponse> {
    const response = await send(this.url, request, { timeoutMs: 10_000 });
    answered.add(response.status);
    return response;
  }

  private async create(): Promise<void> {
    const body: ReviewInput = {
      task_type: 'crash',
      proposed_action: `round ${this.round} create ${(this.sent += 1)} ${randomBytes(random(1, 200)).toString('base64')}`,
      urgency: pick(URGENCIES),
      confidence_score: Math.random(),
      agent_id: random(1, 1000),
      metadata: { round: this.round, tags: ['chaos', 'crash'], note: 'ä€🙂' },
    };
    ledger.createsSent.set(body.proposed_action, body);
    const response = await this.request(jsonRequest('POST', '/reviews', body));
    if (response.status !== 201) return;
    const review = jsonOf<ReviewRecord>(response)!;
    ledger.reviews.set(review.id, review);
    this.acknowledged.creates += 1;
  }

  private async decide(): Promise<void> {
    const undecided = [...ledger.reviews.keys()].filter((id) => !ledger.decisions.has(id));
    if (undecided.length === 0) return this.create();
    const reviewId = pick(undecided);
    const decisionType = pick(DECISION_TYPES);
    const sent: DecisionInput = {
      decision_type: decisionType,
      reviewer_name: `reviewer ${random(1, 9)}`,
      notes: `round ${this.round}`,
      ...(decisionType === 'modify' ? { modified_action: `modified in round ${this.round}` } : {}),
    };
    const entry: { sent: DecisionInput; acknowledged?: DecisionRecord } = { sent };
    ledger.decisions.set(reviewId, entry);
    const response = await this.request(jsonRequest('POST', `/reviews/${reviewId}/decide`, sent));
    if (response.status !== 200) return;
    entry.acknowledged = jsonOf<DecisionRecord>(response);
    this.acknowledged.decisions += 1;
  }

  private async upload(): Promise<void> {
    const open = [...ledger.reviews.keys()].filter((id) => (ledger.uploadsSent.get(id)?.size ?? 0) < MAX_UPLOADS_PER_REVIEW);
    if (open.length === 0) return this.create();
    const reviewId = pick(open);
    const content = randomBytes(random(1, MAX_UPLOAD_BYTES));
    const sent = ledger.uploadsSent.get(reviewId) ?? new Map<string, number>();
    ledger.uploadsSent.set(reviewId, sent.set(sha256(content), content.length));
    const response = await this.request({ method: 'POST', path: `/reviews/${reviewId}/attachments`, ...fileUpload(content, `round-${this.round}.bin`) });
    if (response.status !== 201) return;
    const attachment = jsonOf<AttachmentRecord>(response)!;
    ledger.attachments.set(attachment.id, attachment);
    this.acknowledged.uploads += 1;
  }
}

async function loadAndKill(running: RunningCli, round: number): Promise<Round> {
  const load = new Load(running.url, round);
  const killAfterMs = random(KILL_AFTER_MS.min, KILL_AFTER_MS.max);
  let inFlightAtKill = 0;
  const killer = setTimeout(() => {
    load.killed = true;
    inFlightAtKill = load.inFlight;
    running.child.kill('SIGKILL');
  }, killAfterMs);
  const workers = Array.from({ length: WORKERS }, () => load.worker());
  await running.exited;
  clearTimeout(killer);
  await Promise.all(workers);
  return { round, kill_after_ms: killAfterMs, in_flight_at_kill: inFlightAtKill, acknowledged: load.acknowledged };
}

/** What a create's answer fixes for good; status, decision and timestamps change with a decision. */
const CREATED_FIELDS = [
  'id', 'task_type', 'proposed_action', 'agent_reasoning', 'confidence_score', 'urgency', 'framework', 'metadata', 'organization_id', 'agent_id', 'created_at',
] as const satisfies ReadonlyArray<keyof ReviewRecord>;

/** Checks the restarted server against the ledger; what is wrong is returned, not thrown, so every round runs. */
class Verification {
  readonly found: Problem[] = [];

  constructor(
    private readonly running: RunningCli,
    private readonly round: number | 'final',
  ) {}

  async run(): Promise<Problem[]> {
    await this.restartedCleanly();
    const reviews = await everyReviewListed(this.running.url, 'sort=oldest');
    for (const review of reviews) this.checkReview(review);
    const stored = new Set(reviews.map((review) => review.id));
    for (const id of ledger.reviews.keys()) if (!stored.has(id)) this.problem('lost', `acknowledged review ${id} is gone`);
    const attachmentRows = await this.checkAttachments();
    this.checkFilesOnDisk(attachmentRows);
    return this.found;
  }

  private problem(kind: ProblemKind, message: string): void {
    this.found.push({ round: this.round, kind, message });
  }

  private get(urlPath: string): Promise<RawResponse> {
    return send(this.running.url, { method: 'GET', path: urlPath });
  }

  private async restartedCleanly(): Promise<void> {
    const health = await this.get('/health');
    if (health.status !== 200) this.problem('restart', `/health answered ${health.status}: ${health.body.toString()}`);
    // The CLI writes its pid file just after saying it listens.
    const pidFile = path.join(dataDir(), 'greenlight.pid');
    const readPid = (): string => (fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').trim() : '');
    await eventually(() => readPid() === String(this.running.child.pid), 2_000).catch(() =>
      this.problem('restart', `greenlight.pid names ${readPid() || 'nothing'}, not the new process ${this.running.child.pid}`),
    );
    const leftovers = partialUploads(dataDir());
    if (leftovers.length > 0) this.problem('half-present', `${leftovers.length} partial uploads left in attachments/.incoming`);
  }

  private checkReview(review: ReviewRecord): void {
    const { id, status, decision } = review;
    const decided = status !== 'pending';
    if (decided !== (decision !== null) || decided !== (review.decided_at !== null)) {
      this.problem('half-present', `review ${id} is ${status} with decided_at ${review.decided_at} and decision ${JSON.stringify(decision)}`);
    }
    if (decision && (decision.review_id !== id || STATUS_AFTER[decision.decision_type] !== status)) {
      this.problem('half-present', `review ${id} is ${status} but its decision says ${decision.decision_type} for review ${decision.review_id}`);
    }
    this.checkCreated(review);
    this.checkDecision(review);
  }

  /** Acknowledged: as answered. Not acknowledged but stored anyway: whole, as sent. */
  private checkCreated(review: ReviewRecord): void {
    const acknowledged = ledger.reviews.get(review.id);
    const sent = ledger.createsSent.get(review.proposed_action);
    const expected: Record<string, unknown> | undefined = acknowledged
      ? Object.fromEntries(CREATED_FIELDS.map((field) => [field, acknowledged[field]]))
      : sent && { ...sent };
    if (!expected) return this.problem('half-present', `review ${review.id} matches no create that was sent`);
    const stored: Record<string, unknown> = { ...review };
    for (const [field, want] of Object.entries(expected)) {
      if (!isDeepStrictEqual(stored[field], want)) {
        this.problem(acknowledged ? 'lost' : 'half-present', `review ${review.id}: ${field} is ${JSON.stringify(stored[field])}, not ${JSON.stringify(want)}`);
      }
    }
  }

  private checkDecision(review: ReviewRecord): void {
    const entry = ledger.decisions.get(review.id);
    if (review.decision === null) {
      if (entry?.acknowledged) this.problem('lost', `review ${review.id}: its acknowledged decision ${entry.acknowledged.id} is gone`);
      return;
    }
    if (!entry) return this.problem('half-present', `review ${review.id} has a decision that was never sent`);
    const matches = entry.acknowledged
      ? isDeepStrictEqual(review.decision, entry.acknowledged)
      : Object.entries(entry.sent).every(([field, value]) => isDeepStrictEqual(review.decision?.[field as keyof DecisionRecord], value));
    if (!matches) {
      this.problem(entry.acknowledged ? 'lost' : 'half-present', `review ${review.id}: decision ${JSON.stringify(review.decision)} is not the one sent (${JSON.stringify(entry.acknowledged ?? entry.sent)})`);
    }
  }

  /** Every listed attachment is one that was sent and its bytes read back; every acknowledged one is listed. Returns the number of rows. */
  private async checkAttachments(): Promise<number> {
    let rows = 0;
    for (const [reviewId, sent] of ledger.uploadsSent) {
      const listed = jsonOf<{ attachments: AttachmentRecord[] }>(await this.get(`/reviews/${reviewId}/attachments`))?.attachments ?? [];
      rows += listed.length;
      for (const attachment of listed) {
        if (sent.get(attachment.sha256) !== attachment.size_bytes) this.problem('half-present', `attachment ${attachment.id} matches no upload sent to review ${reviewId}`);
        const acknowledged = ledger.attachments.get(attachment.id);
        if (acknowledged && !isDeepStrictEqual(attachment, acknowledged)) this.problem('lost', `attachment ${attachment.id} is ${JSON.stringify(attachment)}, not as acknowledged`);
        if (!ledger.bytesVerified.has(attachment.id)) await this.checkBytes(attachment);
      }
      const ids = new Set(listed.map((attachment) => attachment.id));
      for (const acknowledged of ledger.attachments.values()) {
        if (acknowledged.review_id === reviewId && !ids.has(acknowledged.id)) this.problem('lost', `acknowledged attachment ${acknowledged.id} is gone`);
      }
    }
    return rows;
  }

  private async checkBytes(attachment: AttachmentRecord): Promise<void> {
    const content = await this.get(`/attachments/${attachment.id}/download`);
    if (content.status === 200 && sha256(content.body) === attachment.sha256) {
      ledger.bytesVerified.add(attachment.id);
      return;
    }
    const kind = ledger.attachments.has(attachment.id) ? 'lost' : 'half-present';
    this.problem(kind, `attachment ${attachment.id}: its content answers ${content.status} with ${content.body.length} bytes, not the ${attachment.size_bytes} stored`);
  }

  /** Bytes on disk that no attachment row points at are an upload half-kept; each is reported in the round it appears. */
  private checkFilesOnDisk(rows: number): void {
    const root = path.join(dataDir(), 'attachments');
    if (!fs.existsSync(root)) return;
    const files = fs
      .readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== '.incoming')
      .reduce((count, directory) => count + fs.readdirSync(path.join(root, directory.name)).length, 0);
    if (files - rows > orphanedFiles) this.problem('orphaned', `${files - rows - orphanedFiles} more files under attachments/ belong to no attachment (${files} files, ${rows} rows)`);
    orphanedFiles = Math.max(orphanedFiles, files - rows);
    if (files < rows) this.problem('lost', `${rows - files} attachments have no file under attachments/ (${files} files, ${rows} rows)`);
  }
}

beforeAll(async () => {
  temp = makeTempDir('greenlight-crash-');
  port = await freePort();
  server = await start();
  for (let round = 1; round <= ROUNDS; round += 1) {
    rounds.push(await loadAndKill(server, round));
    try {
      server = await start();
    } catch (error) {
      server = undefined;
      problems.push({ round, kind: 'restart', message: `did not restart: ${(error as Error).message}` });
      return;
    }
    problems.push(...(await new Verification(server, round).run()));
  }
  // Later crashes must not have hurt what earlier rounds verified: read every attachment once more.
  ledger.bytesVerified.clear();
  problems.push(...(await new Verification(server, 'final').run()));
}, 300_000);

afterAll(async () => {
  await stopProgram(server);
  // A round survives when the server came back with every acknowledged write whole and nothing half-written visible.
  const failedRounds = new Set(problems.filter((problem) => problem.kind !== 'orphaned').map((problem) => problem.round));
  writeFigures('crash', {
    rounds: ROUNDS,
    rounds_run: rounds.length,
    rounds_survived: rounds.filter(({ round }) => !failedRounds.has(round)).length,
    final_check_passed: rounds.length === ROUNDS && !failedRounds.has('final'),
    orphaned_files: orphanedFiles,
    acknowledged: {
      reviews: ledger.reviews.size,
      decisions: [...ledger.decisions.values()].filter((entry) => entry.acknowledged).length,
      attachments: ledger.attachments.size,
    },
    load_statuses: answered,
    problems: problems.length,
    problem_kinds: Object.fromEntries(['restart', 'lost', 'half-present', 'orphaned'].map((kind) => [kind, problems.filter((p) => p.kind === kind).length])),
    first_problems: problems.slice(0, 20),
    per_round: rounds,
  });
  temp?.remove();
});

const problemsOf = (kind: ProblemKind): string[] => problems.filter((p) => p.kind === kind).map((p) => `round ${p.round}: ${p.message}`);

describe(`SIGKILL under load, ${ROUNDS} rounds on one data directory`, () => {
  it('killed and restarted the server every round', () => {
    expect(rounds.length).toBe(ROUNDS);
    expect(rounds.every((round) => round.kill_after_ms >= KILL_AFTER_MS.min && round.kill_after_ms <= KILL_AFTER_MS.max)).toBe(true);
  });

  it('answered no request under load with a 5xx before the kill', () => {
    expect(answered.sum((status) => /^5/.test(status))).toBe(0);
  });

  it('comes back healthy after every kill, with no stale pid file or lock', () => {
    expect(problemsOf('restart')).toEqual([]);
  });

  it('keeps every acknowledged review, decision and attachment intact and readable', () => {
    expect(ledger.reviews.size).toBeGreaterThan(0);
    expect(problemsOf('lost')).toEqual([]);
  });

  it('leaves nothing unacknowledged half-present: no partial review, decision or attachment', () => {
    expect(problemsOf('half-present')).toEqual([]);
  });

  it('leaves no attachment bytes on disk that no attachment refers to', () => {
    expect(problemsOf('orphaned')).toEqual([]);
  });
});
