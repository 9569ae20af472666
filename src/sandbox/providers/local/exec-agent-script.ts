/**
 * The source of the resident exec agent (exec-agent.py beside this file; what it does and its wire
 * protocol are described at its head). A real .py file so that Python tooling and tests can read
 * it; scripts/copy-assets.mjs copies it next to the compiled code.
 */
import { readFileSync } from 'node:fs';

export const AGENT_SCRIPT = readFileSync(new URL('./exec-agent.py', import.meta.url), 'utf8');
