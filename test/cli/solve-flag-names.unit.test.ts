/** `winnower solve` names the flag behind a /solve body field the server refused (src/cli/solve-flag-names.ts). */
import { describe, expect, it } from 'vitest';
import { flagForField, withFlagName } from '../../src/cli/solve-flag-names.js';

describe('solve flag names', () => {
  it('maps a body path to the flag that set it, the longest path winning', () => {
    expect(flagForField('body.waves')).toBe('--waves');
    expect(flagForField('body.repo.commit')).toBe('--commit');
    expect(flagForField('body.repo.path')).toBe('--repo');
    expect(flagForField('body.verify.reproduction.policy.recordings')).toBe('--writer-replay');
    expect(flagForField('body.verify.reproduction.n')).toBe('--reproduction');
    expect(flagForField('body.policies.1.n')).toBe('--policies');
    // A prefix of a word is not its path.
    expect(flagForField('body.nonsense')).toBeUndefined();
    expect(flagForField('server.port')).toBeUndefined();
  });

  it('puts the flag in place of the body path, keeping a path below the flag', () => {
    expect(withFlagName('body.waves: wave sizes must add up to n', 'body.waves')).toEqual({
      message: '--waves: wave sizes must add up to n',
      field: '--waves',
    });
    expect(withFlagName('body.policies.0.n: Too small', 'body.policies.0.n')).toEqual({
      message: '--policies: body.policies.0.n: Too small',
      field: '--policies',
    });
    expect(withFlagName('harness "x" is not defined', 'body.agent.harness').message).toBe('--harness: harness "x" is not defined');
    // Nothing a flag sets: as the server said it.
    expect(withFlagName('body.nonsense: bad', 'body.nonsense')).toEqual({ message: 'body.nonsense: bad', field: 'body.nonsense' });
    expect(withFlagName('no field', undefined)).toEqual({ message: 'no field', field: undefined });
  });
});
