import { type Request, Router } from 'express';
import type { EvalChanges, EvalInput, Evaluations } from '../../domain/evaluations/evaluations';
import { principalOf } from '../auth';
import { pathInteger, queryInteger } from '../params';

/** How long a request to run a suite waits for the result before it answers 202 with the run still going. */
const RUN_ANSWER_WAIT_MS = 20_000;

/**
 * An organization's evaluation suites and their runs (hosted edition only: 404 in the self-hosted one).
 *
 * @openapi
 * components:
 *   parameters:
 *     EvalId:
 *       name: eval_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *     EvalRunId:
 *       name: run_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *   schemas:
 *     EvalFilters:
 *       type: object
 *       additionalProperties: false
 *       description: Which of the organization's reviews the suite looks at; every filter given must hold.
 *       properties:
 *         task_type: { type: array, maxItems: 100, items: { type: string, minLength: 1, maxLength: 255 } }
 *         framework: { type: array, maxItems: 100, items: { type: string, minLength: 1, maxLength: 255 } }
 *         agent_id: { type: array, maxItems: 100, items: { type: integer, minimum: 1 } }
 *         since: { type: string, format: date-time, description: 'Reviews created at or after this time.' }
 *         until: { type: string, format: date-time, description: 'Reviews created before this time (after `since`).' }
 *     EvalTargetPrecision:
 *       type: number
 *       exclusiveMinimum: true
 *       minimum: 0
 *       exclusiveMaximum: true
 *       maximum: 1
 *       default: 0.95
 *       description: The share of reviews at or above the suggested threshold that must have been approved as proposed.
 *     EvalConfidence:
 *       type: number
 *       exclusiveMinimum: true
 *       minimum: 0
 *       exclusiveMaximum: true
 *       maximum: 1
 *       default: 0.95
 *       description: The confidence of the one-sided lower bound that must reach `target_precision` (δ = 1 − confidence).
 *     EvalGrid:
 *       type: array
 *       minItems: 1
 *       maxItems: 50
 *       items: { type: number, exclusiveMinimum: true, minimum: 0, maximum: 1 }
 *       default: [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
 *       description: >-
 *         The thresholds tried, fixed in advance and walked from the highest down; each a
 *         multiple of 0.001 (confidences are compared in thousandths), none repeated (400 otherwise).
 *     EvalMinSamples:
 *       type: integer
 *       minimum: 1
 *       maximum: 1000000
 *       default: 30
 *       description: A threshold with fewer reviews at or above it than max(min_samples, ⌈ln δ / ln target⌉) is skipped, not tested.
 *     EvalSchedule:
 *       type: string
 *       enum: [daily, weekly, null]
 *       nullable: true
 *       description: Runs the suite once a day or a week, once among all the processes; null or absent runs it only when asked.
 *     EvalCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100 }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *         filters: { $ref: '#/components/schemas/EvalFilters' }
 *         target_precision: { $ref: '#/components/schemas/EvalTargetPrecision' }
 *         confidence: { $ref: '#/components/schemas/EvalConfidence' }
 *         grid: { $ref: '#/components/schemas/EvalGrid' }
 *         min_samples: { $ref: '#/components/schemas/EvalMinSamples' }
 *         schedule: { $ref: '#/components/schemas/EvalSchedule' }
 *       example: { name: Refunds, filters: { task_type: [refund] }, schedule: weekly }
 *     EvalUpdate:
 *       type: object
 *       additionalProperties: false
 *       minProperties: 1
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100 }
 *         filters: { $ref: '#/components/schemas/EvalFilters' }
 *         target_precision: { $ref: '#/components/schemas/EvalTargetPrecision' }
 *         confidence: { $ref: '#/components/schemas/EvalConfidence' }
 *         grid: { $ref: '#/components/schemas/EvalGrid' }
 *         min_samples: { $ref: '#/components/schemas/EvalMinSamples' }
 *         schedule: { $ref: '#/components/schemas/EvalSchedule' }
 *       example: { schedule: daily }
 *     Eval:
 *       type: object
 *       required: [id, organization_id, name, filters, target_precision, confidence, grid, min_samples, schedule, next_run_at, created_at, updated_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         name: { type: string }
 *         filters: { $ref: '#/components/schemas/EvalFilters' }
 *         target_precision: { type: number }
 *         confidence: { type: number }
 *         grid: { type: array, items: { type: number }, description: 'Highest first, as walked.' }
 *         min_samples: { type: integer }
 *         schedule: { type: string, enum: [daily, weekly, null], nullable: true }
 *         next_run_at: { type: string, format: date-time, nullable: true, description: 'When a scheduled suite runs next; null without a schedule.' }
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *       example:
 *         id: 4
 *         organization_id: 1
 *         name: Refunds
 *         filters: { task_type: [refund] }
 *         target_precision: 0.95
 *         confidence: 0.95
 *         grid: [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
 *         min_samples: 30
 *         schedule: weekly
 *         next_run_at: '2026-12-01T09:00:00.000Z'
 *         created_at: '2026-11-24T09:00:00.000Z'
 *         updated_at: '2026-11-24T09:00:00.000Z'
 *     EvalList:
 *       type: object
 *       required: [evals, count]
 *       properties:
 *         evals: { type: array, items: { $ref: '#/components/schemas/Eval' } }
 *         count: { type: integer }
 *     EvalInterval:
 *       type: object
 *       nullable: true
 *       description: The two-sided 95 % Wilson score interval; null with no reviews.
 *       required: [lower, upper]
 *       properties:
 *         lower: { type: number }
 *         upper: { type: number }
 *     EvalRate:
 *       type: object
 *       required: [count, share, interval]
 *       properties:
 *         count: { type: number, description: 'Reviews, an audit-sample review weighing 1 / its sample rate.' }
 *         share: { type: number, nullable: true }
 *         interval: { $ref: '#/components/schemas/EvalInterval' }
 *     EvalRates:
 *       type: object
 *       required: [decided, approved, modified, rejected]
 *       properties:
 *         decided: { type: number, description: 'Person-decided reviews (weighted).' }
 *         approved: { $ref: '#/components/schemas/EvalRate' }
 *         modified: { $ref: '#/components/schemas/EvalRate' }
 *         rejected: { $ref: '#/components/schemas/EvalRate' }
 *     EvalCalibrationBin:
 *       type: object
 *       required: [lo, hi, count, mean_confidence, approval_rate]
 *       properties:
 *         lo: { type: number }
 *         hi: { type: number, description: 'Exclusive, except 1.0 in the last bin.' }
 *         count: { type: number }
 *         mean_confidence: { type: number, nullable: true }
 *         approval_rate: { type: number, nullable: true, description: 'Share approved as proposed.' }
 *     EvalThresholdStep:
 *       type: object
 *       required: [threshold, count, approved, lower_bound, passed, skipped]
 *       properties:
 *         threshold: { type: number }
 *         count: { type: number, description: 'Person-decided reviews with a confidence at or above the threshold (weighted).' }
 *         approved: { type: number, description: 'Of those, approved as proposed (weighted).' }
 *         lower_bound: { type: number, nullable: true, description: 'The one-sided Clopper–Pearson lower bound Beta⁻¹(δ; approved, count − approved + 1); null where not tested.' }
 *         passed: { type: boolean, nullable: true, description: 'Whether the bound reached the target; null where skipped or never reached after a failure.' }
 *         skipped: { type: boolean, description: 'Too few reviews to be tested.' }
 *     EvalSuggestedRule:
 *       type: object
 *       required: [status, threshold, count, approved, lower_bound, target, confidence, min_count, steps, guarantee, would_auto_decide, rule]
 *       description: >-
 *         The lowest threshold on the grid whose reviews reach the target precision with the
 *         stated confidence, by fixed-sequence testing from the highest threshold down (stopping
 *         at the first failure). Never a threshold when none passed.
 *       properties:
 *         status:
 *           type: string
 *           enum: [ok, insufficient_data, not_reached]
 *           description: '`insufficient_data`: no threshold had enough reviews to be tested; `not_reached`: the first one tested fell short.'
 *         threshold: { type: number, nullable: true }
 *         count: { type: number, nullable: true }
 *         approved: { type: number, nullable: true }
 *         lower_bound: { type: number, nullable: true }
 *         target: { type: number }
 *         confidence: { type: number }
 *         min_count: { type: integer, description: 'max(min_samples, ⌈ln δ / ln target⌉): the fewest reviews a threshold is tested on.' }
 *         needed: { type: integer, description: 'insufficient_data only: how many more decided reviews at or above the lowest threshold the first test needs.' }
 *         steps: { type: array, items: { $ref: '#/components/schemas/EvalThresholdStep' } }
 *         guarantee: { type: string, description: 'What the answer promises, in words.' }
 *         would_auto_decide:
 *           type: object
 *           nullable: true
 *           required: [count, share]
 *           description: How many of the decided reviews the rule would have decided; null without a threshold.
 *           properties:
 *             count: { type: number, nullable: true }
 *             share: { type: number, nullable: true }
 *         rule:
 *           type: object
 *           nullable: true
 *           additionalProperties: true
 *           description: The body of a shadow auto-approve routing rule at the threshold, with the suite's filters, ready to POST /routing-rules; null without a threshold.
 *     EvalResult:
 *       # No `type: object`, as with Decision: a run's result is null until it succeeds, and
 *       # OpenAPI 3.0 validators apply `allOf` to the null too.
 *       description: >-
 *         The population is the organization's reviews matching the filters that a person
 *         decided; expired, auto-decided and pending reviews are counted apart. The outcome is
 *         approved as proposed (modified and rejected are not). Audit-sample reviews weigh
 *         1 / their sample rate.
 *       required: [population, rates, calibration, suggested_rule, agreement, time_to_decision, modification]
 *       properties:
 *         population:
 *           type: object
 *           required: [decided, weighted_decided, with_confidence, excluded]
 *           properties:
 *             decided: { type: integer }
 *             weighted_decided: { type: number }
 *             with_confidence: { type: integer }
 *             excluded:
 *               type: object
 *               required: [expired, auto_decided, pending]
 *               properties:
 *                 expired: { type: integer }
 *                 auto_decided: { type: integer }
 *                 pending: { type: integer }
 *         rates:
 *           type: object
 *           required: [overall, by_task_type, by_agent]
 *           properties:
 *             overall: { $ref: '#/components/schemas/EvalRates' }
 *             by_task_type:
 *               type: array
 *               items:
 *                 allOf:
 *                   - $ref: '#/components/schemas/EvalRates'
 *                   - type: object
 *                     required: [task_type]
 *                     properties: { task_type: { type: string } }
 *             by_agent:
 *               type: array
 *               items:
 *                 allOf:
 *                   - $ref: '#/components/schemas/EvalRates'
 *                   - type: object
 *                     required: [agent_id]
 *                     properties: { agent_id: { type: integer, nullable: true } }
 *         calibration:
 *           type: object
 *           required: [bin_count, bins, ece, brier, brier_decomposition, auroc]
 *           description: Over person-decided reviews that gave a confidence, counted in thousandths.
 *           properties:
 *             bin_count: { type: integer }
 *             bins: { type: array, items: { $ref: '#/components/schemas/EvalCalibrationBin' } }
 *             ece: { type: number, nullable: true, description: 'Σ (n_b / N)·|approval_rate_b − mean_confidence_b|.' }
 *             brier: { type: number, nullable: true, description: 'Mean of (confidence − y)².' }
 *             brier_decomposition:
 *               type: object
 *               nullable: true
 *               required: [reliability, resolution, uncertainty]
 *               description: Murphy's decomposition over the ten bins.
 *               properties:
 *                 reliability: { type: number }
 *                 resolution: { type: number }
 *                 uncertainty: { type: number }
 *             auroc: { type: number, nullable: true, description: 'Confidence against approved as proposed; ties within one thousandth count half.' }
 *         suggested_rule: { $ref: '#/components/schemas/EvalSuggestedRule' }
 *         agreement:
 *           type: object
 *           required: [pairs, observed, cohen_kappa, gwet_ac1, reviews, sample_limit]
 *           description: Between the votes of reviews with two or more (approval workflows), each pair in the order cast, over the most recent `sample_limit` such reviews.
 *           properties:
 *             pairs: { type: integer }
 *             observed: { type: number, nullable: true }
 *             cohen_kappa: { type: number, nullable: true }
 *             gwet_ac1: { type: number, nullable: true, description: "Gwet's AC1: unlike κ, it stays meaningful when nearly every vote approves." }
 *             reviews: { type: integer }
 *             sample_limit: { type: integer }
 *         time_to_decision:
 *           type: object
 *           required: [decided, p50_seconds, p90_seconds, p99_seconds, expired_share]
 *           description: Nearest-rank percentiles over person-decided reviews; the expired share is of those decided or expired.
 *           properties:
 *             decided: { type: integer }
 *             p50_seconds: { type: number, nullable: true }
 *             p90_seconds: { type: number, nullable: true }
 *             p99_seconds: { type: number, nullable: true }
 *             expired_share: { type: number, nullable: true }
 *         modification:
 *           type: object
 *           required: [share, median_edit_distance, sample_size, sample_limit, too_long]
 *           description: >-
 *             The share modified, and the median normalised edit distance (Levenshtein over code
 *             points ÷ the longer length) over the most recent `sample_limit` modified reviews;
 *             `too_long` of them differed over too long a stretch to be compared.
 *           properties:
 *             share: { type: number, nullable: true }
 *             median_edit_distance: { type: number, nullable: true }
 *             sample_size: { type: integer }
 *             sample_limit: { type: integer }
 *             too_long: { type: integer }
 *     EvalRun:
 *       type: object
 *       required: [id, eval_id, status, triggered_by, started_at, finished_at, result, error]
 *       properties:
 *         id: { type: integer }
 *         eval_id: { type: integer }
 *         status: { type: string, enum: [running, succeeded, failed] }
 *         triggered_by: { type: string, enum: [manual, schedule] }
 *         started_at: { type: string, format: date-time }
 *         finished_at: { type: string, format: date-time, nullable: true }
 *         result:
 *           type: object
 *           allOf: [{ $ref: '#/components/schemas/EvalResult' }]
 *           nullable: true
 *           description: The result, once the run succeeded.
 *         error: { type: string, nullable: true, description: 'Why the run failed.' }
 *       example: { id: 12, eval_id: 4, status: running, triggered_by: manual, started_at: '2026-11-24T09:00:00.000Z', finished_at: null, result: null, error: null }
 *     EvalRunList:
 *       type: object
 *       required: [runs, next_cursor]
 *       properties:
 *         runs: { type: array, items: { $ref: '#/components/schemas/EvalRun' } }
 *         next_cursor: { type: integer, nullable: true, description: 'Pass as `cursor` for the next (older) page; null on the last.' }
 */
export function evalRoutes(evaluations: Evaluations): Router {
  const router = Router();

  /**
   * @openapi
   * /evals:
   *   post:
   *     operationId: createEval
   *     tags: [evals]
   *     summary: Create an evaluation suite (admin)
   *     description: >-
   *       Hosted edition only. A suite measures the organization's agents' proposals and their
   *       confidence against the people who decided them, and suggests an auto-approve rule it can
   *       stand behind. Runs are started with POST /evals/{eval_id}/runs, or by its schedule.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/EvalCreate' }
   *     responses:
   *       '201':
   *         description: The suite.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Eval' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listEvals
   *     tags: [evals]
   *     summary: The organization's evaluation suites, oldest first (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every suite of the organization.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/EvalList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/evals', async (req: Request<Record<string, string>, unknown, EvalInput>, res) => {
    res.status(201).json(await evaluations.create(principalOf(res), req.body));
  });

  router.get('/evals', async (_req, res) => {
    res.json(await evaluations.list(principalOf(res)));
  });

  /**
   * @openapi
   * /evals/{eval_id}:
   *   get:
   *     operationId: getEval
   *     tags: [evals]
   *     summary: One evaluation suite (admin)
   *     description: Hosted edition only. Another organization's suite is a 404.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/EvalId' }]
   *     responses:
   *       '200':
   *         description: The suite.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Eval' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateEval
   *     tags: [evals]
   *     summary: Change an evaluation suite (admin)
   *     description: Hosted edition only. Past runs keep the results they had; a changed schedule starts its period anew.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/EvalId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/EvalUpdate' }
   *     responses:
   *       '200':
   *         description: The suite as changed.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Eval' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: deleteEval
   *     tags: [evals]
   *     summary: Delete an evaluation suite and its runs (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/EvalId' }]
   *     responses:
   *       '204': { description: Deleted. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/evals/:eval_id', async (req, res) => {
    res.json(await evaluations.get(principalOf(res), pathInteger(req, 'eval_id')));
  });

  router.patch('/evals/:eval_id', async (req: Request<{ eval_id: string }, unknown, EvalChanges>, res) => {
    res.json(await evaluations.update(principalOf(res), pathInteger(req, 'eval_id'), req.body));
  });

  router.delete('/evals/:eval_id', async (req, res) => {
    await evaluations.delete(principalOf(res), pathInteger(req, 'eval_id'));
    res.status(204).end();
  });

  /**
   * @openapi
   * /evals/{eval_id}/runs:
   *   post:
   *     operationId: runEval
   *     tags: [evals]
   *     summary: Run an evaluation suite now (admin)
   *     description: >-
   *       Hosted edition only. Counts are aggregated by the database, so a run over a million
   *       decided reviews takes seconds: the answer is 201 with the finished run, or 202 with the
   *       run still `running` when it takes longer than 20 s (read it again with GET).
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/EvalId' }]
   *     responses:
   *       '201':
   *         description: The finished run (succeeded or failed).
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/EvalRun' }
   *       '202':
   *         description: The run, still running.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/EvalRun' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listEvalRuns
   *     tags: [evals]
   *     summary: A suite's runs, newest first (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     parameters:
   *       - { $ref: '#/components/parameters/EvalId' }
   *       - { name: cursor, in: query, description: 'The `next_cursor` of the page before.', schema: { type: integer, minimum: 1 } }
   *       - { name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 100, default: 20 } }
   *     responses:
   *       '200':
   *         description: One page of runs.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/EvalRunList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/evals/:eval_id/runs', async (req, res) => {
    const { run, finished } = await evaluations.startRun(principalOf(res), pathInteger(req, 'eval_id'));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), RUN_ANSWER_WAIT_MS);
    });
    // A run that outlasts the wait goes on; its end is stored whether or not anyone is listening.
    finished.catch(() => undefined);
    const done = await Promise.race([finished, waited]);
    clearTimeout(timer);
    if (done) res.status(201).json(done);
    else res.status(202).json(run);
  });

  router.get('/evals/:eval_id/runs', async (req, res) => {
    res.json(await evaluations.listRuns(principalOf(res), pathInteger(req, 'eval_id'), queryInteger(req, 'limit', 20), queryInteger(req, 'cursor', undefined) ?? null));
  });

  /**
   * @openapi
   * /evals/{eval_id}/runs/{run_id}:
   *   get:
   *     operationId: getEvalRun
   *     tags: [evals]
   *     summary: One run of a suite, with its result (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/EvalId' }, { $ref: '#/components/parameters/EvalRunId' }]
   *     responses:
   *       '200':
   *         description: The run.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/EvalRun' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/evals/:eval_id/runs/:run_id', async (req, res) => {
    res.json(await evaluations.getRun(principalOf(res), pathInteger(req, 'eval_id'), pathInteger(req, 'run_id')));
  });

  return router;
}
