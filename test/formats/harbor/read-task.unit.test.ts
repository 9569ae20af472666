import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../../src/errors.js';
import { baseImageOnly, lastWorkdir, readHarborTask, stripCanary } from '../../../src/formats/harbor/read-task.js';
import { EXAMPLE_TOML, writeExampleTask, writeTaskFolder } from './example-task.js';

/** The WinnowerError `run` throws. */
function errorOf(run: () => unknown): WinnowerError {
  try {
    run();
  } catch (error) {
    if (WinnowerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

const withToml = (toml: string) => writeExampleTask({ 'task.toml': toml });

describe('readHarborTask', () => {
  it('reads the example task: name, instruction, Dockerfile and its WORKDIR, limits, resources, tests', () => {
    const dir = writeExampleTask();
    const task = readHarborTask(dir);
    expect(task.name).toBe('winnower/fix-median');
    expect(task.schemaVersion).toBe('1.4');
    expect(task.instruction).toContain('`median` in /app/stats.py is wrong');
    expect(task.environment).toEqual({
      dockerfile: join(task.dir, 'environment', 'Dockerfile'),
      workdir: '/app',
      cpus: 1,
      memoryMb: 2048,
      network: false,
      env: {},
    });
    expect(task.agentTimeoutS).toBe(900);
    expect(task.verifier).toEqual({ timeoutS: 300, env: {} });
    expect(task.testsDir).toBe(join(task.dir, 'tests'));
  });

  it('uses Harbor defaults: the folder name, schema 1.4, a 600 s verifier, no agent limit, offline', () => {
    const dir = withToml('[environment]\ndocker_image = "python:3.12-slim"\n');
    rmSync(join(dir, 'environment', 'Dockerfile'));
    const task = readHarborTask(dir);
    expect(task.name).toMatch(/^harbor-task-/);
    expect(task.schemaVersion).toBe('1.4');
    expect(task.verifier.timeoutS).toBe(600);
    expect(task.agentTimeoutS).toBeUndefined();
    expect(task.environment).toEqual({ image: 'python:3.12-slim', imageFrom: 'docker_image', network: false, env: {} });
  });

  it('reads the legacy 1.0 form: root version, memory "2G", allow_internet', () => {
    const task = readHarborTask(withToml('version = "1.0"\n[environment]\nmemory = "2G"\nallow_internet = true\nsome_unknown_key = 3\n'));
    expect(task.schemaVersion).toBe('1.0');
    expect(task.environment.memoryMb).toBe(2048);
    expect(task.environment.network).toBe(true);
  });

  it('reads schema 1.0 through 1.4 and refuses a newer one, naming schema_version', () => {
    for (const version of ['1.0', '1.1', '1.2', '1.3', '1.4'])
      expect(readHarborTask(withToml(`schema_version = "${version}"\n`)).schemaVersion).toBe(version);
    const error = errorOf(() => readHarborTask(withToml('schema_version = "1.5"\n'), { field: 'body.harbor_task' }));
    expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect(error.message).toContain('body.harbor_task: task.toml schema_version: schema version "1.5" is not one of 1.0, 1.1');
    expect(error.details).toMatchObject({ field: 'body.harbor_task', file: 'task.toml', key: 'schema_version' });
  });

  it('names the key of each badly typed field', () => {
    const cases: Array<[string, string]> = [
      ['[verifier]\ntimeout_sec = "soon"\n', 'verifier.timeout_sec'],
      ['[agent]\ntimeout_sec = -1\n', 'agent.timeout_sec'],
      ['[environment]\ncpus = "two"\n', 'environment.cpus'],
      ['[environment]\nmemory_mb = 1.5\n', 'environment.memory_mb'],
      ['[environment]\nmemory = "lots"\n', 'environment.memory'],
      ['[environment]\nnetwork_mode = "sometimes"\n', 'environment.network_mode'],
      ['[environment]\nworkdir = "app"\n', 'environment.workdir'],
      ['[verifier.env]\nTOKEN = 3\n', 'verifier.env.TOKEN'],
      ['[task]\nname = ""\n', 'task.name'],
      ['schema_version = 1.4\n', 'schema_version'],
    ];
    for (const [toml, key] of cases) {
      const error = errorOf(() => readHarborTask(withToml(toml)));
      expect(error.details.key, toml).toBe(key);
      expect(error.message).toContain(`task.toml ${key}:`);
    }
  });

  it('refuses multi-step tasks and the other keys it cannot honour, naming each', () => {
    const cases: Array<[string, string]> = [
      ['[[steps]]\nname = "one"\n', 'steps'],
      ['[environment]\nos = "windows"\n', 'environment.os'],
      ['[verifier]\nenvironment_mode = "separate"\n', 'verifier.environment_mode'],
      ['[verifier.environment]\ndocker_image = "x"\n', 'verifier.environment'],
      ['[[verifier.collect]]\ncommand = "ls"\n', 'verifier.collect'],
      ['[verifier]\nuser = "root"\n', 'verifier.user'],
      ['[agent]\nnetwork_mode = "public"\n', 'agent.network_mode'],
      ['[environment]\nnetwork_mode = "allowlist"\n', 'environment.network_mode'],
      ['[environment]\ngpus = 1\n', 'environment.gpus'],
      ['[[environment.mcp_servers]]\nname = "m"\nurl = "http://x"\n', 'environment.mcp_servers'],
      ['[environment.healthcheck]\ncommand = "true"\n', 'environment.healthcheck'],
    ];
    for (const [toml, key] of cases) {
      const error = errorOf(() => readHarborTask(withToml(toml)));
      expect(error.details.key, toml).toBe(key);
    }
    expect(errorOf(() => readHarborTask(withToml('[[steps]]\nname = "one"\n'))).message).toContain('multi-step tasks are not supported');
    // Linux spelled in any case is fine, as are an empty steps list and a shared verifier.
    expect(
      readHarborTask(withToml('steps = []\n[environment]\nos = "Linux"\n[verifier]\nenvironment_mode = "shared"\n')).name,
    ).toBeTruthy();
  });

  it('names the missing or bad file', () => {
    const missing = (file: string) => {
      const dir = writeExampleTask();
      rmSync(join(dir, file), { recursive: true });
      return errorOf(() => readHarborTask(dir)).details.file;
    };
    expect(missing('task.toml')).toBe('task.toml');
    expect(missing('instruction.md')).toBe('instruction.md');
    expect(missing('tests/test.sh')).toBe('tests/test.sh');
    expect(missing('environment')).toBe('environment/');
    expect(missing('environment/Dockerfile')).toBe('environment/');
    expect(errorOf(() => readHarborTask(withToml('[task\nname = 1'))).message).toContain('task.toml: not valid TOML');
    expect(errorOf(() => readHarborTask(writeExampleTask({ 'instruction.md': '\n\n' }))).details.file).toBe('instruction.md');
    expect(errorOf(() => readHarborTask('/nonexistent/harbor-task')).message).toContain('no such task folder');
  });

  it("reads the SWE-bench adapter's layout: a Dockerfile that only names the instance image, WORKDIR /testbed", () => {
    const dir = writeExampleTask({
      'task.toml': 'schema_version = "1.4"\n[task]\nname = "swe-bench/swebench-verified__acme__calc-1"\n',
      'environment/Dockerfile': '# the instance image\nFROM swebench/sweb.eval.x86_64.acme_1776_calc-1:latest\nWORKDIR /testbed\n',
      'tests/config.json': '{"FAIL_TO_PASS": [], "PASS_TO_PASS": []}',
    });
    const task = readHarborTask(dir);
    expect(task.environment).toMatchObject({
      image: 'swebench/sweb.eval.x86_64.acme_1776_calc-1:latest',
      imageFrom: 'Dockerfile',
      workdir: '/testbed',
    });
    expect(task.name).toBe('swe-bench/swebench-verified__acme__calc-1');
  });

  it('refuses compose environments and uploads of environment/ without a Dockerfile', () => {
    expect(errorOf(() => readHarborTask(writeExampleTask({ 'environment/docker-compose.yaml': 'services: {}\n' }))).details.file).toBe(
      'environment/docker-compose.yaml',
    );
    const upload = writeTaskFolder({
      'task.toml': '[environment]\ndocker_image = "python:3.12-slim"\n',
      'instruction.md': 'do it',
      'environment/stats.py': 'x = 1\n',
      'tests/test.sh': '#!/bin/bash\n',
    });
    expect(errorOf(() => readHarborTask(upload)).message).toContain('files to upload into the workdir are not supported');
  });

  it('does not read task files through symbolic links', () => {
    const dir = writeExampleTask();
    rmSync(join(dir, 'instruction.md'));
    symlinkSync('/etc/hostname', join(dir, 'instruction.md'));
    expect(errorOf(() => readHarborTask(dir)).details.file).toBe('instruction.md');
  });

  it('fills ${VAR} and ${VAR:-default} templates from the host, and names an unset one', () => {
    const toml = `${EXAMPLE_TOML}[verifier.env]\nMODE = "\${MODE}"\nLEVEL = "\${LEVEL:-3}"\nPLAIN = "a \${NOT} b"\n`;
    const task = readHarborTask(withToml(toml), { env: { MODE: 'strict' } });
    expect(task.verifier.env).toEqual({ MODE: 'strict', LEVEL: '3', PLAIN: 'a ${NOT} b' });
    const error = errorOf(() => readHarborTask(withToml(toml), { env: {} }));
    expect(error.details.key).toBe('verifier.env.MODE');
  });

  it('an explicit public network turns the network on; [environment] workdir wins over the Dockerfile', () => {
    const task = readHarborTask(withToml('[environment]\nnetwork_mode = "public"\nworkdir = "/srv/code"\n'));
    expect(task.environment.network).toBe(true);
    expect(task.environment.workdir).toBe('/srv/code');
  });

  it('reads a task folder whose tests sit beside test.sh in subfolders', () => {
    const dir = writeExampleTask({ 'tests/data/case.json': '{}' });
    mkdirSync(join(dir, 'tests', 'empty'));
    expect(readHarborTask(dir).testsDir).toBe(join(dir, 'tests'));
  });
});

describe('instruction and Dockerfile helpers', () => {
  it('strips leading canary comments and the blank lines after them, nothing else', () => {
    expect(stripCanary('<!-- BENCHMARK DATA canary GUID 1234 -->\n\n# canary 2\nFix it.\n# canary inside stays\n')).toBe(
      'Fix it.\n# canary inside stays\n',
    );
    expect(stripCanary('# Title\nbody')).toBe('# Title\nbody');
  });

  it('takes the base image only from a Dockerfile that builds nothing', () => {
    expect(baseImageOnly('FROM python:3.12-slim\nWORKDIR /app\n')).toBe('python:3.12-slim');
    expect(baseImageOnly('FROM python:3.12-slim\nRUN pip install pytest\n')).toBeUndefined();
    expect(baseImageOnly('FROM python:3.12-slim AS base\n')).toBeUndefined();
    expect(baseImageOnly('FROM --platform=linux/amd64 python\n')).toBeUndefined();
    expect(baseImageOnly('ARG TAG\nFROM python:$TAG\n')).toBeUndefined();
    expect(baseImageOnly('FROM a\nFROM b\n')).toBeUndefined();
    expect(baseImageOnly('# nothing\n')).toBeUndefined();
  });

  it("takes the Dockerfile's last absolute WORKDIR", () => {
    expect(lastWorkdir('FROM x\nWORKDIR /a\nRUN true\nworkdir /testbed\n')).toBe('/testbed');
    expect(lastWorkdir('FROM x\nWORKDIR $HOME\n')).toBeUndefined();
    expect(lastWorkdir('FROM x\n')).toBeUndefined();
  });
});
