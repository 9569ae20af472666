/**
 * The built-in bash-only agent: system + instance prompt, then one policy turn per step, each
 * command run in the rollout's sandbox, until the agent submits (echoes the sentinel) or a step,
 * token or time limit is hit, or the policy fails. Prompts come from config/agents/*.yaml.
 */
import { type WinnowerError, toWinnowerError } from '../../errors.js';
import type { Sandbox } from '../../sandbox/types.js';
import type { ChatMessage, ExitReason, Task, Trajectory, Usage } from '../../types/index.js';
import { renderTemplate } from '../../util/render-template.js';
import type { AgentConfig } from './agent-config.js';
import { elideMiddle, parseActions, type Action } from './parse-actions.js';
import type { Policy } from '../policy/types.js';

export interface RunAgentOptions {
  policy: Policy;
  sandbox: Sandbox;
  task: Task;
  config: AgentConfig;
  trajectoryId: string;
  seed?: number;
  signal?: AbortSignal;
  /** Called with the partial trajectory after every step. */
  onStep?: (partial: Trajectory) => void;
  /** Go on from a shared prefix (its sandbox is a fork of the prefix's): its messages are kept, marked `meta.shared`. */
  resume?: AgentPrefix;
  /** Stop once this point is reached and hand back the state so far (agent-prefix): the first file edit, or step k. */
  pauseAt?: PausePoint;
}

/** Where a prefix rollout stops for its continuations to branch (solve-request.ts `fork.at`). */
export type PausePoint = 'first-edit' | number;

/** A rollout's state at its fork point: what every continuation starts from. */
export interface AgentPrefix {
  messages: ChatMessage[];
  usage: Usage;
  steps: number;
}

/** What a run came to: its trajectory, and whether it stopped at `pauseAt` rather than ending. */
export interface AgentRun {
  trajectory: Trajectory;
  paused: boolean;
}

/** Ends the loop; carries the exit reason (mini-swe-agent's control-flow exceptions). */
class StopRun extends Error {
  constructor(
    readonly exit: ExitReason,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** A pause at the fork point (not an end: no exit reason, no patch). */
class PauseRun extends Error {}

export async function runAgent(options: RunAgentOptions): Promise<Trajectory> {
  return (await runAgentLoop(options)).trajectory;
}

/** Whether the agent has reached its pause point after `steps` steps. */
async function reached(pauseAt: PausePoint, steps: number, sandbox: Sandbox, signal: AbortSignal): Promise<boolean> {
  if (typeof pauseAt === 'number') return steps >= pauseAt;
  // A file edit is whatever a patch would hold (against the post-setup base).
  return (await sandbox.diff({ signal })) !== '';
}

export async function runAgentLoop(options: RunAgentOptions): Promise<AgentRun> {
  const { policy, sandbox, task, config, signal } = options;
  const { limits } = config;
  const values = { workdir: sandbox.workdir, submit_sentinel: config.submit_sentinel, problem_statement: task.problem_statement };
  const system =
    renderTemplate(config.system_template, values, 'system_template') +
    (policy.mode === 'text' ? renderTemplate(config.text_mode_addendum, values, 'text_mode_addendum') : '');
  // Resumed: the prefix's messages as they were sent, so a prefix-caching server reuses them.
  const messages: ChatMessage[] = options.resume
    ? options.resume.messages.map((message) => ({ ...message, meta: { ...message.meta, shared: true } }))
    : [
        { role: 'system', content: system },
        { role: 'user', content: renderTemplate(config.instance_template, values, 'instance_template') },
      ];
  const usage: Usage = options.resume ? { ...options.resume.usage } : { prompt_tokens: 0, completion_tokens: 0, calls: 0 };
  const started = Date.now();
  const deadline = AbortSignal.timeout(limits.time_limit_s * 1000);
  const turnSignal = signal ? AbortSignal.any([signal, deadline]) : deadline;
  let steps = options.resume?.steps ?? 0;
  let exit: ExitReason = 'unknown';
  let paused = false;
  let exitRaw = '';
  let error: WinnowerError | undefined;

  const snapshot = (patch = ''): Trajectory => ({
    format: 'winnower-trajectory-1',
    id: options.trajectoryId,
    instance_id: task.instance_id,
    source: policy.name,
    messages: [...messages],
    patch,
    exit,
    exit_raw: exitRaw,
    usage: { ...usage },
    meta: {
      agent: config.name,
      policy_mode: policy.mode,
      // The configuration own-history priors are kept per (src/select/priors.ts), beside `source`.
      config: { agent: config.name, policy_mode: policy.mode },
      seed: options.seed,
      steps,
      ...(options.resume
        ? { shared_prefix: { steps: options.resume.steps, messages: options.resume.messages.length, usage: options.resume.usage } }
        : {}),
      started_at: new Date(started).toISOString(),
      duration_ms: Date.now() - started,
      ...(error ? { error: error.toJSON() } : {}),
    },
  });

  const runAction = async (action: Action): Promise<boolean> => {
    const result = await sandbox.exec(action.command, { timeoutMs: limits.command_timeout_s * 1000, signal: turnSignal });
    // The sandbox's note (killed for lack of memory, a full disk) is a line of its own after the output.
    const output =
      elideMiddle(result.stdout + result.stderr, limits.output_head_chars, limits.output_tail_chars) +
      (result.note ? `\n[sandbox] ${result.note}` : '');
    const content = result.timedOut
      ? renderTemplate(config.timeout_template, { timeout_s: limits.command_timeout_s, output }, 'timeout_template')
      : renderTemplate(config.observation_template, { exit_code: result.exitCode ?? 'killed', output }, 'observation_template');
    const meta = {
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      truncated: result.truncated,
      duration_ms: result.durationMs,
      observation: true,
      ...(result.note ? { note: result.note } : {}),
    };
    messages.push(
      action.toolCallId ? { role: 'tool', tool_call_id: action.toolCallId, name: 'bash', content, meta } : { role: 'user', content, meta },
    );
    return result.stdout.trimStart().split('\n')[0]?.trim() === config.submit_sentinel;
  };

  try {
    for (;;) {
      if (signal?.aborted) throw new StopRun('cancelled', 'cancelled');
      if (deadline.aborted) throw new StopRun('timeout', `time limit of ${limits.time_limit_s} s reached`);
      if (steps >= limits.step_limit) throw new StopRun('step_limit', `step limit of ${limits.step_limit} reached`);
      if (usage.prompt_tokens + usage.completion_tokens >= limits.token_limit)
        throw new StopRun('token_limit', `token limit of ${limits.token_limit} reached`);

      const turn = await policy.next({ messages, seed: options.seed, signal: turnSignal });
      steps += 1;
      usage.calls += 1;
      usage.prompt_tokens += turn.usage.prompt_tokens;
      usage.completion_tokens += turn.usage.completion_tokens;
      messages.push({ ...turn.message, role: 'assistant' });

      const parsed = parseActions(turn.message, policy.mode);
      if (!parsed.ok) {
        // A format error costs a step and gets a corrective message; in tools mode every call still needs a reply.
        const content = renderTemplate(config.format_error_template, { ...values, problem: parsed.problem }, 'format_error_template');
        for (const call of turn.message.tool_calls ?? [])
          messages.push({ role: 'tool', tool_call_id: call.id, name: call.function.name, content });
        if (!turn.message.tool_calls?.length) messages.push({ role: 'user', content, meta: { format_error: true } });
      } else {
        for (const action of parsed.actions) {
          if (await runAction(action)) throw new StopRun('submitted', 'submitted');
        }
      }
      options.onStep?.(snapshot());
      if (options.pauseAt !== undefined && (await reached(options.pauseAt, steps, sandbox, turnSignal))) throw new PauseRun();
    }
  } catch (caught) {
    if (caught instanceof PauseRun) {
      paused = true;
    } else if (caught instanceof StopRun) {
      exit = caught.exit;
      exitRaw = caught.detail;
    } else if (deadline.aborted && !signal?.aborted) {
      // The time limit cut a policy call or a command short: a stop condition, not a failure.
      exit = 'timeout';
      exitRaw = `time limit of ${limits.time_limit_s} s reached`;
    } else {
      error = toWinnowerError(caught);
      exit = signal?.aborted ? 'cancelled' : 'error';
      exitRaw = error.message;
    }
  }

  if (paused) return { trajectory: snapshot(), paused };
  let patch = '';
  if (exit !== 'cancelled') {
    try {
      patch = await sandbox.diff();
    } catch (caught) {
      error ??= toWinnowerError(caught);
    }
  }
  return { trajectory: snapshot(patch), paused };
}
