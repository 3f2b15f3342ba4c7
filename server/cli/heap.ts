import v8 from 'node:v8';

/**
 * A headless server's memory is mostly requests held open — agents waiting for decisions —
 * and V8 by default lets the heap grow far past what is live before collecting again. Capping
 * that growth at 20 % keeps the resident size near the live size (measured: 10,000 held
 * requests at ~270 MB instead of ~300 MB) at no measurable cost to create throughput. V8 reads
 * this flag at every collection, so setting it at start-up takes effect.
 */
export function boundHeapGrowth(): void {
  v8.setFlagsFromString('--heap-growing-percent=20');
}

const V8_DEFAULT_GROWTH_FACTOR = 2;

/**
 * Loading the server's modules allocates in bursts that make V8 grow its young generation to
 * its maximum (two 16 MB semi-spaces), which then stays resident until V8 happens to judge the
 * process idle: a freshly started server sat at ~118 MB RSS, ~30 of them an empty young
 * generation. Keeping it at its initial size while start-up loads modules, and letting it grow
 * again once the server listens, keeps the process small at rest; under load it grows as
 * before. V8 reads the growth factor whenever it considers growing, so this takes effect at run
 * time.
 */
export function holdYoungGeneration(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}

export function releaseYoungGeneration(): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`);
}
