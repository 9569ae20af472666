/** `winnower` command line: each subcommand lives in its own file and is loaded on use. */
import { Command } from 'commander';
import { WinnowerError } from '../errors.js';

const program = new Command('winnower').description('Best-of-N for software-engineering agents').version('0.1.0');

program.showHelpAfterError();

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (WinnowerError.isInstance(error)) {
    console.error(`winnower: ${error.code}: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
