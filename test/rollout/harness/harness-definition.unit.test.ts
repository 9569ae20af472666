/** Harness definitions as data: the shipped ones validate, a bad one is an error naming its file and key; where installs live. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHarnessDefinitions } from '../../../src/rollout/harness/harness-definition.js';
import { defaultHarnessDir, harnessInstall } from '../../../src/rollout/harness/harness-install.js';

const dir = mkdtempSync(join(tmpdir(), 'wnw-harness-defs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('harness definitions', () => {
  it('ships pi, claude-code and codex pinned, and the built-in winnower', () => {
    const { builtin, external } = loadHarnessDefinitions();
    expect(builtin?.name).toBe('winnower');
    expect(Object.fromEntries([...external.values()].map((definition) => [definition.name, definition.source]))).toEqual({
      pi: { kind: 'npm', package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
      'claude-code': { kind: 'npm', package: '@anthropic-ai/claude-code', version: '2.1.328', bin: 'claude' },
      codex: { kind: 'npm', package: '@openai/codex', version: '0.169.0', bin: 'codex' },
    });
    // The issue reaches every CLI through its file, never through the command's text.
    for (const definition of external.values()) {
      expect(definition.command).toContain('$WINNOWER_ISSUE_FILE');
      expect(definition.command).not.toContain('problem_statement');
    }
  });

  it.each([
    [
      'bad-key.yaml',
      'name: bad-key\ndescription: x\nprotocol: openai-chat\nsource: {kind: image, bin: x}\nmain_tools: [bash]\nprompt_template: x\ncommand: x\nlimits: {max_calls: 1, token_limit: 1, time_limit_s: 1}\nshell: zsh\n',
      'harness definition bad-key.yaml: : Unrecognized key: "shell"',
    ],
    [
      'loose.yaml',
      'name: loose\ndescription: x\nprotocol: openai-chat\nsource: {kind: npm, package: p, version: latest, bin: p}\nmain_tools: [bash]\nprompt_template: x\ncommand: x\nlimits: {max_calls: 1, token_limit: 1, time_limit_s: 1}\n',
      'harness definition loose.yaml: source.version: an exact version (1.2.3)',
    ],
    [
      'other.yaml',
      'name: renamed\ndescription: x\nprotocol: openai-chat\nsource: {kind: image, bin: x}\nmain_tools: [bash]\nprompt_template: x\ncommand: x\nlimits: {max_calls: 1, token_limit: 1, time_limit_s: 1}\n',
      'names itself "renamed"; the file must be renamed.yaml',
    ],
  ])('refuses %s, naming it', (file, text, message) => {
    const folder = join(dir, file.replace('.yaml', ''));
    mkdirSync(folder);
    writeFileSync(join(folder, file), text);
    expect(() => loadHarnessDefinitions(folder)).toThrow(message);
  });

  it('installs live outside the repository: WINNOWER_HARNESS_DIR, else the cache; one folder per pinned version', () => {
    expect(defaultHarnessDir({ WINNOWER_HARNESS_DIR: '/srv/harnesses' })).toBe('/srv/harnesses');
    expect(defaultHarnessDir({})).toMatch(
      process.getuid?.() === 0 ? /^\/var\/cache\/winnower\/harnesses$/ : /\.cache\/winnower\/harnesses$/,
    );
    const pi = loadHarnessDefinitions().external.get('pi')!;
    expect(harnessInstall(pi, dir)).toEqual({
      folder: join(dir, 'pi@0.73.1'),
      program: '/opt/winnower/harness/node_modules/.bin/pi',
      installed: false,
      installCommand: 'winnower harness install pi',
    });
  });
});
