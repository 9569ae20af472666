/** `toAtif` with its output checked by `validateAtif`: what winnower hands out is valid ATIF, or an internal error that says where not. */
import { wnwError } from '../../errors.js';
import type { Trajectory } from '../../types/trajectory.js';
import type { AtifTrajectory } from './atif-types.js';
import { toAtif } from './to-atif.js';
import { validateAtif } from './validate-atif.js';

export function checkedAtif(trajectory: Trajectory): AtifTrajectory {
  // Checked as it will be read: through JSON, where undefined fields disappear.
  const document = JSON.parse(JSON.stringify(toAtif(trajectory))) as AtifTrajectory;
  const validation = validateAtif(document);
  if (!validation.valid) {
    const first = validation.errors[0]!;
    throw wnwError('WNW_ERR_OP_INTERNAL', `the ATIF written for ${trajectory.id} is not valid: ${first.path}: ${first.message}`, {
      details: { trajectory_id: trajectory.id, errors: validation.errors.slice(0, 20) },
    });
  }
  return document;
}
