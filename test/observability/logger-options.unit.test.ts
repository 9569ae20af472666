/** Log format: pino-pretty on a terminal, JSON lines otherwise, unless log_format forces one. */
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/observability/logger-options.js';

describe('loggerOptions', () => {
  it.each([
    ['auto', true, true],
    ['auto', false, false],
    ['json', true, false],
    ['pretty', false, true],
  ] as const)('log_format %s on a terminal: %s → pretty %s', (format, terminal, pretty) => {
    const options = loggerOptions('info', format, terminal);
    expect(options.level).toBe('info');
    expect(options.transport === undefined ? false : (options.transport as { target: string }).target === 'pino-pretty').toBe(pretty);
  });
});
