/** The log parsers' names, apart from the parsers, so the CLI's option declarations load nothing else (detect.ts registers them). */
export const PARSER_NAMES = ['pytest', 'django', 'sympy', 'unittest', 'exit-code'] as const;
export type ParserName = (typeof PARSER_NAMES)[number];
