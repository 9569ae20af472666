/**
 * A request's patches checked against the patch rules (src/sandbox/patch-rules.ts) before
 * anything applies one or hands it back as the chosen patch: paths inside the repository and out
 * of `.git`, symbolic links pointing inside it. A refused patch is a 400 naming the request field
 * and the path.
 */
import { wnwError } from '../../errors.js';
import { PATCH_RULES, patchViolation } from '../../sandbox/patch-rules.js';

/** Throws WNW_ERR_INPUT_INVALID naming `field` when `patch` breaks the patch rules. */
export function checkPatchPaths(patch: string, field: string): void {
  const violation = patchViolation(patch);
  if (violation) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: the patch ${violation.what}; ${PATCH_RULES}`, {
      details: { field, path: violation.path },
    });
  }
}
