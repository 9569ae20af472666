/**
 * A harness rollout in a DOCKER sandbox on a real engine (WINNOWER_DOCKER_HOST; .ci/run starts one
 * and imports the CI base image): the scripted python3 harness reaches the recording proxy through
 * the bound socket folder and the loopback forwarder, run by the host's node bound into a container
 * with NetworkMode none, as uid 1000. The base image (bash, coreutils, git, python3-minimal) lacks
 * libstdc++, which the host's node needs, and python's json and http packages, which the scripted
 * harness imports: the rollout image adds the host's copies (any SWE-bench image has both), and
 * the bare base image shows the failure a harness rollout then reports.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyOptions } from '../../../src/rollout/policy/policy-options.js';
import { createHarnessCatalog } from '../../../src/rollout/harness/harness-catalog.js';
import { prepareHarnessRollout } from '../../../src/rollout/harness/run-harness.js';
import { createDockerProvider } from '../../../src/sandbox/providers/docker/provider.js';
import type { Sandbox, SandboxProvider } from '../../../src/sandbox/types.js';
import type { Task, Trajectory } from '../../../src/types/index.js';
import { startFakeHarnessPolicy, type FakeHarnessPolicy } from '../../fakes/fake-harness-policy.js';
import { makeContractRepo } from '../../sandbox/contract.js';
import { realEngineSocket } from '../../sandbox/docker-targets.js';

const UPSTREAM_KEY = 'sk-upstream-docker-2b8e4d71c9a3f056';
const socketPath = realEngineSocket();
const catalog = createHarnessCatalog({ definitionsDir: new URL('../../fixtures/harnesses', import.meta.url).pathname });
/** Where the host's node finds libstdc++ (Debian's multiarch folder, the same in the image). */
const LIBSTDCXX = '/usr/lib/x86_64-linux-gnu/libstdc++.so.6';
/** What the scripted harness imports beyond python3-minimal (pure python; the host's Debian 12 python is the image's). */
const PYTHON_LIB = '/usr/lib/python3.11';
const PYTHON_MODULES = ['json', 'http'];

describe.skipIf(!socketPath)(
  `[docker-engine] harness rollout in a docker sandbox (real engine, network none, scripted harness)${socketPath ? '' : ' (skipped: WINNOWER_DOCKER_HOST is not set)'}`,
  () => {
    const base = process.env.WINNOWER_DOCKER_BASE_IMAGE ?? 'winnower-ci/base:latest';
    const tag = `winnower-test/rollout/harness:${process.pid}-${Date.now()}`;
    const bareTag = `${tag}-bare`;
    let agent: Agent;
    let provider: SandboxProvider;
    let fake: FakeHarnessPolicy;

    const engine = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: Buffer): Promise<string> => {
      const response = await request(`http://docker${path}`, {
        method,
        dispatcher: agent,
        ...(body ? { body, headers: { 'content-type': 'application/x-tar' } } : {}),
      });
      const text = await response.body.text();
      if (response.statusCode >= 300) throw new Error(`${method} ${path} answered ${response.statusCode}: ${text}`);
      return text;
    };

    /** Builds FROM the base image, with the contract repository at /testbed and, if asked, the host's libstdc++ and python modules. */
    async function build(name: string, withHostParts: boolean): Promise<void> {
      const context = mkdtempSync(join(tmpdir(), 'harness-docker-context-'));
      try {
        makeContractRepo(join(context, 'testbed'));
        const lines = [`FROM ${base}`, 'COPY testbed /testbed'];
        if (withHostParts) {
          copyFileSync(realpathSync(LIBSTDCXX), join(context, 'libstdc++.so.6'));
          lines.push(`COPY libstdc++.so.6 ${LIBSTDCXX}`);
          for (const module of PYTHON_MODULES) {
            cpSync(join(PYTHON_LIB, module), join(context, 'python', module), {
              recursive: true,
              filter: (source) => !source.includes('__pycache__'),
            });
            lines.push(`COPY python/${module} ${PYTHON_LIB}/${module}`);
          }
        }
        writeFileSync(join(context, 'Dockerfile'), `${lines.join('\n')}\n`);
        const tar = execFileSync('tar', ['-C', context, '-c', '.'], { maxBuffer: 64 * 1024 * 1024 });
        const log = await engine('POST', `/build?${new URLSearchParams({ t: name, rm: '1', forcerm: '1' })}`, tar);
        const failed = log
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { error?: string })
          .find((line) => line.error);
        if (failed) throw new Error(`building ${name} FROM ${base} failed: ${failed.error}`);
      } finally {
        rmSync(context, { recursive: true, force: true });
      }
    }

    beforeAll(async () => {
      agent = new Agent({ connect: { socketPath: socketPath! } });
      await build(tag, true);
      await build(bareTag, false);
      provider = createDockerProvider({ socketPath: socketPath! });
      fake = await startFakeHarnessPolicy({ short: { tool: 'bash', commands: ['echo hello > greeting.txt'] } });
    }, 180_000);
    afterAll(async () => {
      await fake?.close();
      await provider?.close();
      for (const name of [tag, bareTag]) await engine('DELETE', `/images/${encodeURIComponent(name)}?force=1`).catch(() => undefined);
      await agent?.close();
    });

    const policy = (url: string): PolicyOptions => ({
      kind: 'openai',
      url,
      model: 'short',
      api_key: UPSTREAM_KEY,
      temperature: 0.3,
      top_p: 1,
      max_tokens: 256,
      mode: 'tools',
      timeout_s: 30,
    });

    async function rollout(image: string, issue: string, after?: (sandbox: Sandbox) => Promise<void>): Promise<Trajectory> {
      const task: Task = {
        instance_id: 'contract',
        problem_statement: issue,
        repo: { path: '/testbed' },
        fail_to_pass: [],
        pass_to_pass: [],
        meta: {},
      };
      const prepared = await prepareHarnessRollout({
        harness: catalog.resolve('scripted'),
        policy: policy(fake.url),
        task,
        trajectoryId: 'job/0',
        seed: 7,
        signal: new AbortController().signal,
      });
      try {
        const sandbox = await provider.create({ image, mounts: prepared.mounts });
        try {
          const trajectory = await prepared.run(sandbox);
          await after?.(sandbox);
          return trajectory;
        } finally {
          await sandbox.close();
        }
      } finally {
        await prepared.close();
      }
    }

    it('records the calls, keeps the upstream key out of the container, and the harness change lands in the workspace', async () => {
      const before = fake.requests.length;
      let envDump = '';
      let containerEnv: string[] = [];
      let found = '';
      let greeting = '';
      let networkMode = '';
      let who = '';
      const trajectory = await rollout(tag, 'Say hello.\n@dump-env', async (sandbox) => {
        envDump = Buffer.from(await sandbox.readFile('/tmp/winnower-home/env.txt')).toString();
        const inspected = JSON.parse(await engine('GET', `/containers/${sandbox.id}/json`)) as {
          Config: { Env: string[] };
          HostConfig: { NetworkMode: string };
        };
        containerEnv = inspected.Config.Env;
        networkMode = inspected.HostConfig.NetworkMode;
        found = (
          await sandbox.exec(`grep -rl -- ${UPSTREAM_KEY} /tmp /var/tmp /run /opt/winnower ${sandbox.workdir} 2>/dev/null; echo searched`)
        ).stdout;
        greeting = (await sandbox.exec('cat greeting.txt')).stdout;
        who = (await sandbox.exec('id -u; stat -c %u greeting.txt')).stdout;
      });
      expect(trajectory.exit_raw).toBe('harness exited 0');
      expect(trajectory.exit).toBe('submitted');
      expect(networkMode).toBe('none');
      // The recorded calls: two main-loop exchanges, the tool call and its result, the final turn.
      expect(trajectory.meta.steps).toBe(2);
      expect(trajectory.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
      expect(trajectory.messages[2]!.tool_calls![0]!.function.arguments).toContain('greeting.txt');
      expect(trajectory.usage).toMatchObject({ calls: 2, prompt_tokens: 100 + 150, completion_tokens: 40 });
      const sent = fake.requests.slice(before);
      expect(sent.map((entry) => entry.body.seed)).toEqual([7, 7]);
      // The key: upstream only, never in the container's or the harness's environment, files or the trajectory.
      expect(sent.every((entry) => entry.headers.authorization === `Bearer ${UPSTREAM_KEY}`)).toBe(true);
      expect(envDump).toMatch(/AGENT_KEY=wnw-rollout-[0-9a-f]{48}/);
      expect(envDump).not.toContain(UPSTREAM_KEY);
      expect(containerEnv.join('\n')).not.toContain(UPSTREAM_KEY);
      expect(found).toBe('searched\n');
      expect(JSON.stringify(trajectory)).not.toContain(UPSTREAM_KEY);
      // The harness's change, made as the sandbox user, is in the workspace and the patch.
      expect(greeting).toBe('hello\n');
      expect(who).toBe('1000\n1000\n');
      expect(trajectory.patch).toContain('+hello');
    }, 120_000);

    it('on the bare base image (no libstdc++) the host node cannot start, and the rollout error says so', async () => {
      const before = fake.requests.length;
      const trajectory = await rollout(bareTag, 'Say hello.');
      expect(fake.requests.length).toBe(before);
      expect(trajectory.exit).toBe('error');
      expect(trajectory.meta).toMatchObject({ exit_code: 127, error: { code: 'WNW_ERR_HARNESS_FAILED' } });
      expect(trajectory.exit_raw).toContain('libstdc++.so.6: cannot open shared object file');
    }, 120_000);
  },
);
