/** Loads and validates an agent config (prompts and limits) from config/agents/<name>.yaml. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import { packageRoot } from '../../util/package-root.js';

export const AgentLimits = z.object({
  step_limit: z.number().int().positive(),
  token_limit: z.number().int().positive(),
  time_limit_s: z.number().positive(),
  command_timeout_s: z.number().positive(),
  output_head_chars: z.number().int().nonnegative(),
  output_tail_chars: z.number().int().nonnegative(),
});
export type AgentLimits = z.infer<typeof AgentLimits>;

export const AgentConfig = z.object({
  name: z.string().min(1),
  system_template: z.string().min(1),
  instance_template: z.string().min(1),
  text_mode_addendum: z.string(),
  observation_template: z.string().min(1),
  timeout_template: z.string().min(1),
  format_error_template: z.string().min(1),
  submit_sentinel: z.string().min(1),
  limits: AgentLimits,
});
export type AgentConfig = z.infer<typeof AgentConfig>;

/** Names of the agent configs under config/agents. */
export function listAgentConfigs(): string[] {
  const dir = join(packageRoot(), 'config', 'agents');
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((entry) => entry.endsWith('.yaml'))
        .map((entry) => entry.slice(0, -'.yaml'.length))
        .sort()
    : [];
}

/**
 * `name` is a file under config/agents (without .yaml) or a path to a YAML file. Errors name the
 * config as it was given, never the folder it resolves to (a request must not learn host paths).
 */
export function loadAgentConfig(name = 'default', overrides: Partial<AgentLimits> = {}): AgentConfig {
  const isPath = name.endsWith('.yaml') || name.endsWith('.yml');
  const file = isPath ? name : join(packageRoot(), 'config', 'agents', `${name}.yaml`);
  if (!existsSync(file)) {
    const message = isPath
      ? `agent config ${name} not found`
      : `agent config "${name}" not found; available: ${listAgentConfigs().join(', ')}`;
    throw wnwError('WNW_ERR_CFG_INVALID', message, { details: { field: 'agent.config' } });
  }
  const parsed = AgentConfig.safeParse(parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.');
    throw wnwError('WNW_ERR_CFG_INVALID', `agent config ${isPath ? name : `"${name}"`}: ${key}: ${issue.message}`, {
      details: { field: 'agent.config', key },
    });
  }
  return { ...parsed.data, limits: { ...parsed.data.limits, ...overrides } };
}
