/** The selection strategies, apart from their zod schema so that the CLI's start lists them without zod. */
export const STRATEGY_NAMES = ['value', 'consensus', 'hybrid', 'learned', 'robust', 'judge'] as const;
