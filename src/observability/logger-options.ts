/**
 * The server's pino options: pino-pretty's human-readable lines on a terminal, JSON lines
 * otherwise (for log collectors), unless `log_format` forces one.
 */
export type LogFormat = 'auto' | 'json' | 'pretty';

export function loggerOptions(level: string, format: LogFormat, isTerminal = process.stdout.isTTY === true): Record<string, unknown> {
  const pretty = format === 'pretty' || (format === 'auto' && isTerminal);
  if (!pretty) return { level };
  return {
    level,
    transport: { target: 'pino-pretty', options: { colorize: isTerminal, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
  };
}
