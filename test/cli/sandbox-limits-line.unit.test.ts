/** The demo header's limits line: the local provider's budget over all sandboxes is a sentence, not `{… groups 3 items}`. */
import { describe, expect, it } from 'vitest';
import { sandboxLimitsLine } from '../../src/cli/sandbox-limits-line.js';

describe('sandboxLimitsLine', () => {
  it('spells out the budget all sandboxes share and lists the other limits with how they are enforced', () => {
    const line = sandboxLimitsLine({
      memory: 'cgroup v2',
      processes: 'cgroup v2 + pid namespace',
      allSandboxes: { processes: 16384, processesBy: 'cgroup v2', memoryMb: 18078, memoryBy: 'cgroup v2', groups: ['/a', '/b', '/c'] },
    });
    expect(line).toBe(
      'memory: cgroup v2; processes: cgroup v2 + pid namespace; all sandboxes together: 16384 processes (cgroup v2) and 18078 MB of memory (cgroup v2)',
    );
  });

  it('writes other nested settings as key value pairs with their lists spelled out, and says none when there are none', () => {
    expect(sandboxLimitsLine({ cpu: { shares: 2, cores: [0, 1] } })).toBe('cpu: shares 2, cores 0, 1');
    expect(sandboxLimitsLine({})).toBe('none');
    expect(sandboxLimitsLine(undefined)).toBe('none');
  });
});
