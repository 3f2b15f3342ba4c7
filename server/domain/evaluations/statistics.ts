/**
 * The statistics of an evaluation suite: pure functions over counts and sums that the store
 * aggregates in SQL, so a run over a million reviews never holds them in memory. Each takes
 * weighted counts (an audit-sample review counts 1 / rate) where the contract weighs them.
 */

/** z for a two-sided 95 % interval: the 0.975 quantile of the standard normal. */
export const Z_95 = 1.959963984540054;

export interface Interval {
  lower: number;
  upper: number;
}

/**
 * The Wilson score interval of x successes in n trials (Wilson 1927): unlike the Wald interval
 * it stays inside [0, 1] and keeps its coverage near 0 and 1, where approval rates live.
 */
export function wilsonInterval(x: number, n: number, z = Z_95): Interval | null {
  if (n <= 0) return null;
  const p = x / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

// Lanczos approximation (g = 7, n = 9): ln Γ to about 15 significant digits for x > 0.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const y = x - 1;
  let sum = LANCZOS[0];
  for (let i = 1; i < LANCZOS.length; i += 1) sum += LANCZOS[i] / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(sum);
}

/**
 * The continued fraction of the incomplete beta function (modified Lentz). Its terms needed grow
 * like √max(a, b), so the cap is far above the 100 of textbook code: at a million reviews the
 * fraction needs a few thousand.
 */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 100_000; m += 1) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1]. */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast on one side of the mean; the other side by symmetry.
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(x, a, b)) / a;
  return 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

/**
 * The p-quantile of Beta(a, b): bisection on the regularized incomplete beta, which is
 * monotone in x. 200 halvings reach the limit of a double, and each costs one fraction, so this
 * stays well under a millisecond even at a million reviews.
 */
export function betaQuantile(p: number, a: number, b: number): number {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  let low = 0;
  let high = 1;
  for (let i = 0; i < 200; i += 1) {
    const mid = (low + high) / 2;
    if (mid === low || mid === high) break;
    if (regularizedBeta(mid, a, b) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/**
 * The one-sided Clopper–Pearson lower bound on a proportion: Beta⁻¹(δ; x, n − x + 1) with
 * δ = 1 − confidence; 0 when nothing succeeded. Exact (never below its confidence), where the
 * normal approximations are not at the few misses a precision near 1 leaves.
 */
export function clopperPearsonLower(x: number, n: number, confidence: number): number {
  if (n <= 0 || x <= 0) return 0;
  return betaQuantile(1 - confidence, x, n - x + 1);
}

/** Ten equal-width bins [lo, hi), the last one closed at 1.0. */
export const CALIBRATION_BINS = 10;

/** The bin a confidence falls into; the store computes the same with the same formula in SQL. */
export function binOf(confidence: number): number {
  return Math.min(CALIBRATION_BINS - 1, Math.floor(confidence * CALIBRATION_BINS));
}

/** What the store sums per bin: weights, Σc, Σy, Σc², Σc·y (weighted). */
export interface BinSums {
  bin: number;
  count: number;
  sum_confidence: number;
  sum_approved: number;
  sum_confidence_squared: number;
  sum_confidence_approved: number;
}

export interface CalibrationBin {
  lo: number;
  hi: number;
  count: number;
  mean_confidence: number | null;
  approval_rate: number | null;
}

export interface Calibration {
  bins: CalibrationBin[];
  /** Expected calibration error: Σ (n_b / N)·|rate_b − mean_confidence_b|. */
  ece: number | null;
  /** Mean of (c − y)². */
  brier: number | null;
  /** Murphy's decomposition over the ten bins: brier ≈ reliability − resolution + uncertainty (exact when confidences in a bin are equal). */
  brier_decomposition: { reliability: number; resolution: number; uncertainty: number } | null;
  auroc: number | null;
}

function round(value: number, digits = 6): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** The ten bins, ECE, the Brier score and its decomposition, from the per-bin sums. */
export function calibrationFrom(sums: readonly BinSums[], auroc: number | null): Calibration {
  const byBin = new Map(sums.map((sum) => [sum.bin, sum]));
  const total = sums.reduce((acc, sum) => acc + sum.count, 0);
  const approvedTotal = sums.reduce((acc, sum) => acc + sum.sum_approved, 0);
  const bins: CalibrationBin[] = [];
  let ece = 0;
  let reliability = 0;
  let resolution = 0;
  let squaredError = 0;
  const base = total > 0 ? approvedTotal / total : 0;
  for (let bin = 0; bin < CALIBRATION_BINS; bin += 1) {
    const sum = byBin.get(bin);
    const lo = round(bin / CALIBRATION_BINS, 2);
    const hi = round((bin + 1) / CALIBRATION_BINS, 2);
    if (!sum || sum.count <= 0) {
      bins.push({ lo, hi, count: 0, mean_confidence: null, approval_rate: null });
      continue;
    }
    const mean = sum.sum_confidence / sum.count;
    const rate = sum.sum_approved / sum.count;
    bins.push({ lo, hi, count: round(sum.count, 3), mean_confidence: round(mean), approval_rate: round(rate) });
    const share = sum.count / total;
    ece += share * Math.abs(rate - mean);
    reliability += share * (mean - rate) ** 2;
    resolution += share * (rate - base) ** 2;
    // Σ (c − y)² = Σc² − 2Σcy + Σy, since y² = y.
    squaredError += sum.sum_confidence_squared - 2 * sum.sum_confidence_approved + sum.sum_approved;
  }
  if (total <= 0) return { bins, ece: null, brier: null, brier_decomposition: null, auroc };
  return {
    bins,
    ece: round(ece),
    brier: round(squaredError / total),
    brier_decomposition: { reliability: round(reliability), resolution: round(resolution), uncertainty: round(base * (1 - base)) },
    auroc,
  };
}

/** Approved and not approved reviews at one confidence value (the store rounds it to 0.001). */
export interface ScoreCounts {
  score: number;
  positives: number;
  negatives: number;
}

/**
 * The area under the ROC curve: the chance that an approved review had a higher confidence than
 * one that was not, ties counting half (Mann–Whitney). Null when either class is empty.
 */
export function auroc(counts: readonly ScoreCounts[]): number | null {
  const sorted = [...counts].sort((a, b) => a.score - b.score);
  const positives = sorted.reduce((acc, row) => acc + row.positives, 0);
  const negatives = sorted.reduce((acc, row) => acc + row.negatives, 0);
  if (positives <= 0 || negatives <= 0) return null;
  let negativesBelow = 0;
  let wins = 0;
  for (const row of sorted) {
    wins += row.positives * (negativesBelow + row.negatives / 2);
    negativesBelow += row.negatives;
  }
  return round(wins / (positives * negatives));
}

/** A q×q table of paired ratings: table[i][j] pairs whose first vote was category i and second j. */
export type PairTable = number[][];

export interface Agreement {
  pairs: number;
  observed: number | null;
  cohen_kappa: number | null;
  gwet_ac1: number | null;
}

/**
 * Observed agreement, Cohen's κ (chance from each position's own margins) and Gwet's AC1
 * (chance from the mean margins, Gwet 2008), which stays meaningful when nearly every vote is
 * the same and κ collapses towards 0 or below.
 */
export function agreement(table: PairTable): Agreement {
  const q = table.length;
  const pairs = table.reduce((acc, row) => acc + row.reduce((a, b) => a + b, 0), 0);
  if (pairs <= 0) return { pairs: 0, observed: null, cohen_kappa: null, gwet_ac1: null };
  let observed = 0;
  const rows = new Array<number>(q).fill(0);
  const cols = new Array<number>(q).fill(0);
  for (let i = 0; i < q; i += 1) {
    for (let j = 0; j < q; j += 1) {
      rows[i] += table[i][j] / pairs;
      cols[j] += table[i][j] / pairs;
    }
    observed += table[i][i] / pairs;
  }
  const kappaChance = rows.reduce((acc, row, k) => acc + row * cols[k], 0);
  const ac1Chance = q > 1 ? rows.reduce((acc, row, k) => acc + ((row + cols[k]) / 2) * (1 - (row + cols[k]) / 2), 0) / (q - 1) : 0;
  return {
    pairs,
    observed: round(observed),
    cohen_kappa: kappaChance < 1 ? round((observed - kappaChance) / (1 - kappaChance)) : null,
    gwet_ac1: ac1Chance < 1 ? round((observed - ac1Chance) / (1 - ac1Chance)) : null,
  };
}

/** The 1-based rank of the p-th percentile of n values by the nearest-rank method: ⌈p/100 · n⌉, at least 1. */
export function nearestRank(p: number, n: number): number {
  return Math.max(1, Math.ceil((p / 100) * n - 1e-9));
}

/** The p-th percentile of ascending values by the nearest-rank method; null for none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[nearestRank(p, sorted.length) - 1];
}

/**
 * The most cells one edit distance may fill once the common prefix and suffix are trimmed: an
 * action may be 100,000 characters, and the quadratic table over two such texts would hold a run
 * for minutes. A pair past it is left out of the median and counted apart.
 */
export const MAX_EDIT_CELLS = 4_000_000;

/**
 * Levenshtein distance over code points (not UTF-16 units) ÷ the longer length; 0 for two empty
 * texts; null when the parts that differ are too long to compare within MAX_EDIT_CELLS.
 */
export function normalisedEditDistance(a: string, b: string): number | null {
  let left = Array.from(a);
  let right = Array.from(b);
  const longer = Math.max(left.length, right.length);
  if (longer === 0) return 0;
  // An edit is usually a small change in a long text: what both share at the ends costs nothing.
  let start = 0;
  while (start < left.length && start < right.length && left[start] === right[start]) start += 1;
  let end = 0;
  while (end < left.length - start && end < right.length - start && left[left.length - 1 - end] === right[right.length - 1 - end]) end += 1;
  left = left.slice(start, left.length - end);
  right = right.slice(start, right.length - end);
  if (left.length * right.length > MAX_EDIT_CELLS) return null;
  let previous = Array.from({ length: right.length + 1 }, (_, j) => j);
  for (let i = 1; i <= left.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= right.length; j += 1) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left[i - 1] === right[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[right.length] / longer;
}

/** The median of values (the mean of the middle two for an even count); null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
