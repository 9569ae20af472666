/**
 * Integration: a candidate patch with a submodule section (`Subproject commit <sha>-dirty`, or a
 * moved commit), as agents' `git diff` prints it, on the local provider's overlay workspace and on
 * a copy. It used to fail on the overlay with `unable to write file 'vendor/lib' mode 160000:
 * Input/output error` (docs/design/04-local-sandbox.md#11), so such a candidate could never be
 * chosen; now the section is left out, the rest applies and the result says what was left out.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { verifyCandidate } from '../../src/verify/verify-candidate.js';
import { type SubmoduleRepo, makeSubmoduleRepo } from './submodule-repo.js';

const bwrap = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].find((path) => existsSync(path));

describe.skipIf(!bwrap)(
  `patches with submodule sections on the local provider${bwrap ? '' : ' (skipped: bubblewrap is not installed)'}`,
  () => {
    let repo: SubmoduleRepo;
    const quiet = { info: () => undefined, warn: () => undefined };
    const overlay = createLocalProvider({ logger: quiet, workspace: 'overlay' });
    const copy = createLocalProvider({ logger: quiet, workspace: 'copy' });
    beforeAll(() => {
      repo = makeSubmoduleRepo();
    });
    afterAll(async () => {
      await overlay.close();
      await copy.close();
      repo.cleanup();
    });

    it('the fixture is what agents produce: a -dirty section and a moved-commit section', () => {
      expect(repo.patches.fixWithDirtySubmodule).toMatch(/^\+Subproject commit [0-9a-f]{40}-dirty$/m);
      expect(repo.patches.fixWithMovedSubmodule).toMatch(/^index [0-9a-f]+\.\.[0-9a-f]+ 160000$/m);
    });

    for (const [workspace, provider] of [
      ['overlay', overlay],
      ['copy', copy],
    ] as const) {
      it(`verifies a fix whose patch carries a submodule section (${workspace} workspace)`, async () => {
        expect(await provider.describe()).toMatchObject({ workspace });
        for (const [name, patch, kind] of [
          ['dirty', repo.patches.fixWithDirtySubmodule, 'dirty'],
          ['moved', repo.patches.fixWithMovedSubmodule, 'moved'],
        ] as const) {
          const sandbox = await provider.create({ repo: repo.task.repo });
          try {
            const result = await verifyCandidate(sandbox, repo.task, { id: name, patch }, { parser: 'unittest', testTimeoutMs: 60_000 });
            expect(result, JSON.stringify(result)).toMatchObject({
              status: 'resolved',
              applied: true,
              submodules_left_out: [{ path: 'vendor/lib', kind }],
            });
            expect(result.apply_note).toContain(`vendor/lib (${kind})`);
          } finally {
            await sandbox.close();
          }
        }
      }, 120_000);
    }

    it('on the overlay, git apply itself can re-make the submodule folder (userxattr)', async () => {
      const sandbox = await overlay.create({ repo: repo.task.repo });
      try {
        await sandbox.writeFile('/tmp/raw.patch', repo.patches.fixWithDirtySubmodule);
        const applied = await sandbox.exec('git apply /tmp/raw.patch && rmdir vendor/lib && mkdir vendor/lib && cat calc/ops.py');
        expect(applied.stderr).toBe('');
        expect(applied).toMatchObject({ exitCode: 0 });
        expect(applied.stdout).toContain('a + b');
      } finally {
        await sandbox.close();
      }
    }, 60_000);
  },
);
