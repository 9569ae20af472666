/**
 * `harbor_task` at submit (docs/harbor.md): the folder must lie under `server.repo_roots`; it is
 * read and checked, and the fields the request leaves out are filled from it before the body is
 * validated, so every later check (the image's access, the repository, the agent's limits) sees the
 * task's values. A field the request gives wins, except `issue`: the instruction is the issue, and
 * giving both is refused.
 */
import { wnwError } from '../../errors.js';
import { type HarborTask, readHarborTask } from '../../formats/harbor/read-task.js';
import { checkFolderAccess } from './repo-access.js';

const FIELD = 'body.harbor_task';

type Body = Record<string, unknown>;
const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body with the Harbor task's fields filled in; any other body as it came (validation judges it). */
/** `env`: where the task's `${VAR}` templates are filled from (SolveDeps.harborEnv; a server's is empty). */
export async function expandHarborTask(body: unknown, roots: readonly string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  if (!isObject(body) || typeof body.harbor_task !== 'string' || body.harbor_task === '') return body;
  await checkFolderAccess(body.harbor_task, roots, FIELD);
  if (body.issue !== undefined)
    throw wnwError('WNW_ERR_INPUT_INVALID', "body.issue: a Harbor task's instruction.md is the issue; leave issue out", {
      details: { field: 'body.issue' },
    });
  return harborBody(body, readHarborTask(body.harbor_task, { field: FIELD, env }));
}

/** `body` completed from `task`: the request's repository (or image) replaces the task's environment. */
export function harborBody(body: Body, task: HarborTask): Body {
  const image = body.image ?? (body.repo === undefined ? task.environment.image : undefined);
  if (image === undefined && body.repo === undefined)
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `${FIELD}: the task's environment is environment/Dockerfile, which winnower does not build (it does more than name a base image): give image (built from it) or repo (the code as a checkout)`,
      { details: { field: FIELD } },
    );
  const agent = body.agent === undefined ? {} : body.agent;
  const verify = body.verify;
  return {
    ...body,
    issue: task.instruction,
    instance_id: body.instance_id ?? task.name,
    ...(image !== undefined ? { image } : {}),
    ...(task.agentTimeoutS !== undefined && isObject(agent) && agent.time_limit_s === undefined
      ? { agent: { ...agent, time_limit_s: task.agentTimeoutS } }
      : {}),
    ...(isObject(verify) && verify.timeout_s === undefined ? { verify: { ...verify, timeout_s: task.verifier.timeoutS } } : {}),
  };
}
