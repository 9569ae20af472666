/** The judge a command's flags name (`--judge-url`, `--judge-model`, …: judge-flags.ts), checked, its key from the environment. */
import { wnwError } from '../errors.js';
import { JudgeOptions } from '../judge/judge-options.js';
import type { JudgeFlags } from './judge-flags.js';

/**
 * The judge the flags name, or undefined: --judge-url and --judge-model together (either alone is
 * refused, as are --judge-k and --judge-timeout without them), the key from WINNOWER_JUDGE_KEY.
 */
export function judgeFromFlags(flags: JudgeFlags, env: NodeJS.ProcessEnv = process.env): JudgeOptions | undefined {
  const named = flags.judgeUrl !== undefined || flags.judgeModel !== undefined;
  if (!named) {
    const stray = flags.judgeK !== undefined ? 'judge-k' : flags.judgeTimeout !== undefined ? 'judge-timeout' : undefined;
    if (stray) throw wnwError('WNW_ERR_INPUT_INVALID', `--${stray} needs --judge-url and --judge-model`, { details: { field: stray } });
    return undefined;
  }
  const missing = flags.judgeUrl === undefined ? 'judge-url' : flags.judgeModel === undefined ? 'judge-model' : undefined;
  if (missing)
    throw wnwError('WNW_ERR_INPUT_INVALID', `--${missing}: a judge needs both --judge-url and --judge-model`, {
      details: { field: missing },
    });
  const parsed = JudgeOptions.safeParse({
    url: flags.judgeUrl,
    model: flags.judgeModel,
    ...(env.WINNOWER_JUDGE_KEY ? { api_key: env.WINNOWER_JUDGE_KEY } : {}),
    ...(flags.judgeK === undefined ? {} : { k: flags.judgeK }),
    ...(flags.judgeTimeout === undefined ? {} : { timeout_s: flags.judgeTimeout }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0]);
    const field = key === 'api_key' ? 'WINNOWER_JUDGE_KEY' : key === 'timeout_s' ? 'judge-timeout' : `judge-${key}`;
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field === 'WINNOWER_JUDGE_KEY' ? field : `--${field}`}: ${issue.message}`, {
      details: { field },
    });
  }
  return parsed.data;
}
