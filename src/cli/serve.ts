/** `winnower serve`: the HTTP API on the configured host and port. */
import type { Command } from 'commander';
import { port } from './parse-options.js';

export interface ServeCommandFlags {
  config?: string;
  host?: string;
  port?: number;
  dataDir?: string;
  store?: string;
}

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP API (POST /solve, /rerank, /score, /admin/model; GET /jobs/:id) and the web inspector at /ui (server.ui)')
    .option('-c, --config <file>', 'YAML or JSON config file (also WINNOWER_CONFIG)')
    .option('--host <host>', 'listen address')
    .option('--port <port>', 'listen port', port)
    .option('--data-dir <dir>', 'where jobs are stored (SQLite)')
    .option('--store <store>', 'sqlite, or a postgres:// URL several replicas share (server.store, WINNOWER_STORE)')
    .addHelpText(
      'after',
      '\nSwapping the value model without a restart: POST /admin/model {"path": "/abs/model-folder"} (no body: re-read the folder serving now),\n' +
        'or SIGHUP (re-reads the folder serving now). The folder is loaded and checked first; a bad one keeps the current model (422 WNW_ERR_SCORE_RELOAD).\n' +
        'Jobs already running finish on the model they started with; every result names its model in scored_by. POST /admin/model needs an API key\n' +
        'when server.api_keys is set; without keys only clients on this host may call it.',
    )
    .action(async (flags: ServeCommandFlags) => (await import('./serve-action.js')).runServe(flags));
}
