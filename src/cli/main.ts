/**
 * `winnower` command line: one file per subcommand, registered here. A subcommand's file only
 * declares its options; what it does sits in its `*-action.ts`, imported when it runs, so a start
 * (and every `--help`) loads commander and little else.
 */
import { Command, CommanderError } from 'commander';
import { WinnowerError } from '../errors.js';
import { registerBenchCommand } from './bench.js';
import { registerDemoCommand } from './demo.js';
import { registerHarnessCommand } from './harness.js';
import { registerInspectCommand } from './inspect.js';
import { registerJobsCommand } from './jobs.js';
import { registerPolicyCommand } from './policy.js';
import { registerRerankCommand } from './rerank.js';
import { registerRunCommand } from './run.js';
import { registerSandboxCommand } from './sandbox-run.js';
import { registerSandboxServeCommand } from './sandbox-serve.js';
import { registerServeCommand } from './serve.js';
import { registerSolveCommand } from './solve.js';
import { registerTrainCommand } from './train.js';
import { tinyModelDir } from './option-values.js';

const program = new Command('winnower').description('Best-of-N for software-engineering agents').version('0.1.0');
// A flag commander refuses (unknown, missing its value, not one of its choices, a value its parser
// rejects) is invalid input: exit 2, as for any request winnower itself refuses (docs/solve.md), with
// a pointer to the help rather than all of it. Subcommands inherit both settings when created.
program.showHelpAfterError('(add --help for the options)');
program.exitOverride();

registerSolveCommand(program);
registerRerankCommand(program);
registerRunCommand(program);
registerInspectCommand(program);
registerServeCommand(program);
registerDemoCommand(program);
registerSandboxCommand(program);
registerSandboxServeCommand(program.commands.find((command) => command.name() === 'sandbox')!);
registerHarnessCommand(program);
registerTrainCommand(program, tinyModelDir());
registerBenchCommand(program);
registerJobsCommand(program);
registerPolicyCommand(program);

/**
 * An unknown command is an error (exit 2), also with --help: commander would print the parent's
 * help and exit 0 there, and exit 1 without it.
 */
function unknownCommand(argv: readonly string[]): { message: string; help: string } | undefined {
  let command: Command = program;
  for (const token of argv) {
    if (token.startsWith('-') || command.commands.length === 0) return undefined;
    const next = command.commands.find((candidate) => candidate.name() === token || candidate.aliases().includes(token));
    if (!next) {
      if (token === 'help') return undefined;
      const names = command.commands.map((candidate) => candidate.name()).join(', ');
      // The help to read is the parent's, whose list holds the commands that do exist.
      const parent = ['winnower', ...commandPath(command)].join(' ');
      return { message: `unknown command '${[...commandPath(command), token].join(' ')}' (commands: ${names})`, help: `${parent} --help` };
    }
    command = next;
  }
  return undefined;
}

function commandPath(command: Command): string[] {
  const names: string[] = [];
  for (let at: Command | null = command; at && at !== program; at = at.parent) names.unshift(at.name());
  return names;
}

const unknown = unknownCommand(process.argv.slice(2));
if (unknown) {
  console.error(`winnower: ${unknown.message}; see ${unknown.help}`);
  process.exit(2);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here with 0; commander has already printed what it had to say.
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  if (WinnowerError.isInstance(error)) {
    // The field once: messages that already lead with it (`file:line: field: ...`) are not suffixed.
    const named = typeof error.details.field === 'string' ? error.details.field : undefined;
    const field = named && !error.message.includes(`${named}: `) ? ` (field: ${named})` : '';
    console.error(`winnower: ${error.code}: ${error.message}${field}`);
    process.exit(2);
  }
  throw error;
}
