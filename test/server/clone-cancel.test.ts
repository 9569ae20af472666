/**
 * A job whose repository is a remote that never answers (a tarpit on loopback): `DELETE /jobs/:id`
 * and closing the app (server shutdown) end it while git is still cloning, and no git process of
 * the clone outlives them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cloneHanging, gitProcessesFor, startTarpit, type Tarpit } from '../fakes/tarpit-server.js';
import { eventually } from '../sandbox/local-helpers.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

/** A /solve body of two rollouts of a repository cloned from `url`. */
function cloningBody(repoDir: string, url: string): Record<string, unknown> {
  return solveBody(repoDir, {
    repo: { url },
    n: 2,
    policy: { kind: 'replay', recordings: [demoRecordings()['correct-fix']] },
    verify: { enabled: false },
  });
}

describe.skipIf(!hasBubblewrap())('a job cloning from a remote that never answers', () => {
  let world: TestWorld;
  let tarpit: Tarpit;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  afterEach(async () => {
    await tarpit?.close();
  });

  it('is cancelled by DELETE /jobs/:id, which answers once the clone is killed', async () => {
    tarpit = await startTarpit();
    const server = await world.start();
    try {
      const posted = await server.app.inject({ method: 'POST', url: '/solve', payload: cloningBody(world.repo, tarpit.url) });
      expect(posted.statusCode, posted.body).toBe(202);
      const jobId = (posted.json() as { job_id: string }).job_id;
      await cloneHanging(tarpit);

      const deleted = await server.app.inject({ method: 'DELETE', url: `/jobs/${jobId}` });
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect((deleted.json() as { status: string }).status).toBe('cancelled');
      expect(
        await eventually(
          () => gitProcessesFor(tarpit),
          (lines) => lines.length === 0,
        ),
      ).toEqual([]);
      // One clone for both rollouts, and its connection is gone.
      expect(tarpit.connections).toBe(1);
      expect(
        await eventually(
          () => tarpit.open,
          (open) => open === 0,
        ),
      ).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('does not hold the server shutdown: closing the app interrupts the job and kills the clone', async () => {
    tarpit = await startTarpit();
    const server = await world.start();
    const posted = await server.app.inject({ method: 'POST', url: '/solve', payload: cloningBody(world.repo, tarpit.url) });
    const jobId = (posted.json() as { job_id: string }).job_id;
    await cloneHanging(tarpit);

    await server.close();
    // The job itself ended within the shutdown's grace (not merely left behind when it ran out).
    expect(server.jobs.isRunning(jobId)).toBe(false);
    expect(
      await eventually(
        () => gitProcessesFor(tarpit),
        (lines) => lines.length === 0,
      ),
    ).toEqual([]);
  }, 60_000);
});
