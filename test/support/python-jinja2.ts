/**
 * A Python with Jinja2 (the renderer the OpenHands SDK uses), to check our chat-template rendering
 * against: `python3` on PATH when it has the module, else Debian's /usr/bin/python3 (CI installs
 * python3-jinja2 there). Undefined when neither has it.
 */
import { spawnSync } from 'node:child_process';

export const pythonWithJinja2: string | undefined = ['python3', '/usr/bin/python3'].find(
  (python) => spawnSync(python, ['-c', 'import jinja2'], { stdio: 'ignore' }).status === 0,
);
