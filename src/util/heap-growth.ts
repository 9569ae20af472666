/**
 * A batch job that streams its input (rerank of tens of thousands of candidates) keeps a small
 * live heap but promotes each instance's trajectories to the old generation before they die; V8
 * then grows the heap by up to 4× the live size between major collections, so the peak RSS grows
 * with the length of the run, not with what it holds (bench/results/rerank-scale.md: 400 → 500–
 * 535 MB from 5,000 to 50,000 candidates, the live heap after each collection 70–130 MB).
 * A growing factor of 1 + percent/100 bounds that: 365 → 409 MB, at about 7% more CPU.
 *
 * V8 reads the factor each time it sets the next limit, so it takes effect when set at run time.
 * Process-wide (worker threads too): only for a command that owns the process, never the server.
 */
import { setFlagsFromString } from 'node:v8';

const HEAP_GROWING_PERCENT = 30;

export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
