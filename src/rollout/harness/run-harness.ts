/**
 * One rollout of a third-party agent CLI. Before the sandbox exists: start the rollout's
 * recording proxy and name the mounts (the proxy's socket folder read-write; the CLI's install
 * folder, the node runtime and the loopback forwarder read-only; all but the install folder in
 * the runtime folder of harness-runtime.ts, which the sandbox user can reach). In the sandbox: write the
 * harness's config files and the issue file under a private HOME in /tmp, then run the forwarder
 * and the harness in ONE exec (each exec has its own network namespace, so the forwarder must
 * share the harness's). A budget, an upstream failure, the time limit or a cancel kills the whole
 * exec; the trajectory comes from the recording, stored after every exchange, the patch from
 * the sandbox's diff.
 */
import { toWinnowerError, wnwError, type WinnowerError } from '../../errors.js';
import type { Sandbox, SandboxMount } from '../../sandbox/types.js';
import type { Task, Trajectory } from '../../types/index.js';
import { renderTemplate } from '../../util/render-template.js';
import type { PolicyOptions } from '../policy/policy-options.js';
import { startRecordingProxy, type ProxyStop, type RecordingProxy } from '../proxy/recording-proxy.js';
import { createUpstream } from '../proxy/upstream.js';
import type { ResolvedHarness } from './harness-catalog.js';
import { HARNESS_MOUNT } from './harness-install.js';
import { harnessRuntime } from './harness-runtime.js';
import { harnessTrajectory, type HarnessOutcome } from './harness-trajectory.js';

/** Where things appear inside the sandbox. */
const SOCKET_MOUNT = '/run/winnower';
const NODE_MOUNT = '/opt/winnower/node/bin/node';
const FORWARDER_MOUNT = '/opt/winnower/lib/loopback-forwarder.mjs';
const HOME = '/tmp/winnower-home';
/** The forwarder's port: every exec has its own loopback, so one number serves every rollout. */
const LOOPBACK_PORT = 4141;
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const TAIL_CHARS = 4000;

export interface HarnessLimits {
  max_calls?: number;
  token_limit?: number;
  time_limit_s?: number;
}

export interface HarnessRolloutOptions {
  harness: ResolvedHarness;
  /** The resolved upstream policy (same protocol as the harness, or a replay). */
  policy: PolicyOptions;
  task: Task;
  trajectoryId: string;
  /** Rollout index: the seed where the protocol takes one, and which recording a replay uses. */
  seed: number;
  /** Which recording a replay uses (default: `seed`); a mixed job counts each policy's rollouts from 0. */
  recordingIndex?: number;
  /** The model name the harness is told (default: the policy's). */
  model?: string;
  limits?: HarnessLimits;
  signal: AbortSignal;
  /** Called with the partial trajectory after every main-loop exchange. */
  onStep?: (partial: Trajectory) => void;
}

export interface HarnessRollout {
  /** To add to the sandbox spec. */
  readonly mounts: SandboxMount[];
  run(sandbox: Sandbox): Promise<Trajectory>;
  /** Stops the proxy and removes its socket folder; idempotent. */
  close(): Promise<void>;
}

const tail = (text: string): string => (text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text);

export async function prepareHarnessRollout(options: HarnessRolloutOptions): Promise<HarnessRollout> {
  const { definition, install } = options.harness;
  // Files the sandbox binds, where its user can reach them whatever folder holds this checkout.
  const runtime = harnessRuntime();
  const limits = {
    ...definition.limits,
    ...Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, value]) => value !== undefined)),
  };
  const stopController = new AbortController();
  const signal = AbortSignal.any([options.signal, stopController.signal]);
  const startedAt = Date.now();
  const model = options.model ?? (options.policy.kind === 'replay' ? 'replay' : options.policy.model);
  const temperature = options.policy.kind === 'openai' ? options.policy.temperature : undefined;
  const upstream = createUpstream(definition.protocol, options.policy, {
    sampling: { seed: options.seed, temperature },
    recordingIndex: options.recordingIndex ?? options.seed,
  });
  const context = {
    definition,
    trajectoryId: options.trajectoryId,
    instanceId: options.task.instance_id,
    source: `${definition.name}:${upstream.name}`,
    seed: options.seed,
    startedAt,
  };
  let proxy: RecordingProxy;
  try {
    proxy = await startRecordingProxy({
      protocol: definition.protocol,
      upstream,
      mainTools: definition.main_tools,
      budget: { maxCalls: limits.max_calls, tokenLimit: limits.token_limit },
      signal,
      onExchange: () => options.onStep?.(harnessTrajectory(proxy, context, { exit: 'unknown', exitRaw: '', patch: '', meta: {} })),
      // A budget or an upstream failure ends the rollout now: the harness would only retry.
      onStop: (stop: ProxyStop) => stopController.abort(new Error(stop.detail)),
      socketParent: runtime.dir,
    });
  } catch (error) {
    await upstream.close();
    throw error;
  }

  const mounts: SandboxMount[] = [
    { source: proxy.socketDir, target: SOCKET_MOUNT, readOnly: false },
    { source: runtime.node, target: NODE_MOUNT },
    { source: runtime.forwarder, target: FORWARDER_MOUNT },
    ...(install.folder ? [{ source: install.folder, target: HARNESS_MOUNT }] : []),
  ];

  const run = async (sandbox: Sandbox): Promise<Trajectory> => {
    const origin = `http://127.0.0.1:${LOOPBACK_PORT}`;
    const values = { proxy_origin: origin, proxy_url: `${origin}/v1`, token: proxy.token, model, home: HOME, workdir: sandbox.workdir };
    let outcome: HarnessOutcome;
    try {
      for (const file of definition.files)
        await sandbox.writeFile(`${HOME}/${file.path}`, renderTemplate(file.content, values, `files.${file.path}`), { signal });
      const issueFile = `${HOME}/.winnower/issue.md`;
      const script = `${HOME}/.winnower/run.sh`;
      // The issue goes in a file and the command reads it at run time: its text never becomes shell source.
      await sandbox.writeFile(
        issueFile,
        renderTemplate(
          definition.prompt_template,
          { problem_statement: options.task.problem_statement, workdir: sandbox.workdir },
          'prompt_template',
        ),
        { signal },
      );
      await sandbox.writeFile(script, `${definition.command}\n`, { signal });
      const env: Record<string, string> = {
        HOME,
        PATH: `${NODE_MOUNT.replace(/\/node$/, '')}:${HARNESS_MOUNT}/node_modules/.bin:${SYSTEM_PATH}`,
        WINNOWER_ISSUE_FILE: issueFile,
        WINNOWER_MODEL: model,
        ...Object.fromEntries(Object.entries(definition.env).map(([name, value]) => [name, renderTemplate(value, values, `env.${name}`)])),
      };
      const result = await sandbox.exec(
        `exec node ${FORWARDER_MOUNT} ${SOCKET_MOUNT}/${proxy.socketName} ${LOOPBACK_PORT} -- bash ${script}`,
        {
          cwd: sandbox.workdir,
          env,
          timeoutMs: limits.time_limit_s * 1000,
          signal,
        },
      );
      const meta = {
        exit_code: result.exitCode,
        stdout_tail: tail(result.stdout),
        stderr_tail: tail(result.stderr),
        timed_out: result.timedOut,
      };
      outcome = decide(proxy.stopped(), options.signal, result, limits.time_limit_s, meta);
      const mainCalls = proxy.exchanges.filter((exchange) => exchange.kind === 'main').length;
      if (outcome.exit === 'submitted' && mainCalls === 0 && proxy.exchanges.length > 0) {
        // Every call lacked the main tools: the definition's main_tools do not match what this CLI sends.
        const error = wnwError(
          'WNW_ERR_HARNESS_FAILED',
          `harness ${definition.name} made no agent-loop call: none of its ${proxy.exchanges.length} requests offered all of main_tools (${definition.main_tools.join(', ')})`,
          {
            details: { main_tools: definition.main_tools },
          },
        );
        outcome = { exit: 'error', exitRaw: error.message, patch: '', meta: { ...meta, error: error.toJSON() } };
      }
    } catch (caught) {
      const error = toWinnowerError(caught);
      const stop = proxy.stopped();
      outcome = stop
        ? decide(stop, options.signal, undefined, limits.time_limit_s, {})
        : { exit: options.signal.aborted ? 'cancelled' : 'error', exitRaw: error.message, patch: '', meta: { error: error.toJSON() } };
    }
    if (outcome.exit !== 'cancelled') {
      try {
        outcome.patch = await sandbox.diff();
      } catch (caught) {
        outcome.meta.error ??= toWinnowerError(caught).toJSON();
      }
    }
    return harnessTrajectory(proxy, context, outcome);
  };

  return { mounts, run, close: () => proxy.close() };
}

/** The exit of a harness run: cancel, then the proxy's stop (budget, upstream failure), then time, then the CLI's own status. */
function decide(
  stop: ProxyStop | undefined,
  jobSignal: AbortSignal,
  result: { exitCode: number | null; timedOut: boolean; stderr: string } | undefined,
  timeLimitS: number,
  meta: Record<string, unknown>,
): HarnessOutcome {
  const with_ = (exit: HarnessOutcome['exit'], exitRaw: string, error?: WinnowerError): HarnessOutcome => ({
    exit,
    exitRaw,
    patch: '',
    meta: { ...meta, ...(error ? { error: error.toJSON() } : {}) },
  });
  if (jobSignal.aborted) return with_('cancelled', 'cancelled');
  if (stop) return with_(stop.exit, stop.detail, stop.error);
  if (result?.timedOut) return with_('timeout', `time limit of ${timeLimitS} s reached`);
  if (result?.exitCode === 0) return with_('submitted', 'harness exited 0');
  const lastLine = result?.stderr.trim().split('\n').at(-1) ?? '';
  const error = wnwError(
    'WNW_ERR_HARNESS_FAILED',
    `harness exited with ${result?.exitCode ?? 'no exit code'}${lastLine ? `: ${lastLine.slice(0, 300)}` : ''}`,
    { details: { exit_code: result?.exitCode ?? null } },
  );
  return with_('error', error.message, error);
}
