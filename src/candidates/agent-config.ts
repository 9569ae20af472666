/** Loads and validates an agent config (prompts and limits) from config/agents/<name>.yaml. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { wnwError } from '../errors.js';
import { packageRoot } from '../util/package-root.js';

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

/** `name` is a file under config/agents (without .yaml) or a path to a YAML file. */
export function loadAgentConfig(name = 'default', overrides: Partial<AgentLimits> = {}): AgentConfig {
  const file = name.endsWith('.yaml') || name.endsWith('.yml') ? name : join(packageRoot(), 'config', 'agents', `${name}.yaml`);
  if (!existsSync(file)) throw wnwError('WNW_ERR_CFG_INVALID', `agent config ${file} not found`, { details: { field: 'agent' } });
  const parsed = AgentConfig.safeParse(parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw wnwError('WNW_ERR_CFG_INVALID', `${file}: ${issue.path.join('.')}: ${issue.message}`, { details: { field: issue.path.join('.') } });
  }
  return { ...parsed.data, limits: { ...parsed.data.limits, ...overrides } };
}
