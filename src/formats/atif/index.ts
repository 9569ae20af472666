/** ATIF trajectories out and in: the plain-function API the rest of winnower (and Harbor output) uses. */
export type * from './atif-types.js';
export { ATIF_WRITE_VERSION, atifMinor } from './atif-version.js';
export { toAtif, type ToAtifOptions } from './to-atif.js';
export { checkedAtif } from './checked-atif.js';
export { atifText, fromAtif, type FromAtifOptions, type FromAtifResult } from './from-atif.js';
export { validateAtif, type AtifProblem, type AtifValidation } from './validate-atif.js';
export { atifUnknownWarning } from './atif-warnings.js';
export { importAtif, isAtifDocument, trialTaskName } from './import-atif.js';
