/**
 * The local sandbox's exec agent as the Python file it is (src/sandbox/providers/local/exec-agent.py):
 * it compiles, the host loads exactly that file, and outside a sandbox's pid namespace it refuses to
 * run (its kill(-1) would reach every process of the user there). The protocol itself is covered by
 * local-agent.test.ts inside real sandboxes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AGENT_SCRIPT } from '../../src/sandbox/providers/local/exec-agent-script.js';

const AGENT = fileURLToPath(new URL('../../src/sandbox/providers/local/exec-agent.py', import.meta.url));
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

describe('exec-agent.py', () => {
  it('is what the host hands to the sandbox', () => {
    expect(AGENT_SCRIPT).toBe(readFileSync(AGENT, 'utf8'));
  });

  it('compiles', () => {
    const result = spawnSync(PYTHON, ['-I', '-S', '-c', 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")', AGENT], {
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('refuses to run when it is not pid 1', () => {
    const result = spawnSync(PYTHON, ['-I', '-S', AGENT], { encoding: 'utf8', input: '', timeout: 10_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('must run as pid 1');
  });
});
