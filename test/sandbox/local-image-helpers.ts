/**
 * Helpers for the image tests of the local provider: which tools are missing, and a tiny OCI
 * image layout written by hand (image-layout.md of the OCI image spec): a base layer holding the
 * host's bash, a few coreutils and git with their libraries, a repository at /testbed and a stand-in
 * conda; a second layer that deletes a file and a folder through whiteouts and adds a file.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeContractRepo } from './contract.js';

function onPath(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], {
      stdio: 'ignore',
      env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/usr/bin:/sbin:/bin` },
    });
    return true;
  } catch {
    return false;
  }
}

/** Why the image tests cannot run here (skopeo or umoci missing), or undefined. */
export const imageToolsMissing: string | undefined = ['skopeo', 'umoci'].every(onPath)
  ? undefined
  : 'skopeo or umoci is not installed (apt-get install -y skopeo umoci)';

/** Programs the tiny image carries, copied from the host with the libraries ldd names. */
const PROGRAMS = [
  'bash',
  'cat',
  'ls',
  'mkdir',
  'dirname',
  'rm',
  'mktemp',
  'cp',
  'find',
  'env',
  'id',
  'touch',
  'head',
  'tr',
  'wc',
  'sleep',
  'seq',
  'git',
];

function hostPath(name: string): string {
  return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
}

function copyWithLibraries(program: string, rootfs: string): void {
  const target = join(rootfs, 'usr', 'bin', program);
  copyFileSync(program === 'bash' ? hostPath('bash') : hostPath(program), target);
  chmodSync(target, 0o755);
  const ldd = execFileSync('ldd', [hostPath(program)], { encoding: 'utf8' });
  for (const match of ldd.matchAll(/(\/\S+\.so[^\s]*)/g)) {
    const library = match[1]!;
    const destination = join(rootfs, library);
    if (existsSync(destination) || !existsSync(library)) continue;
    mkdirSync(dirname(destination), { recursive: true });
    copyFileSync(library, destination);
  }
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface TinyImage {
  /** The OCI layout folder. */
  layout: string;
  /** `oci:<layout>:v1` */
  reference: string;
  /** Full SHA of the contract commit at /testbed. */
  baseCommit: string;
  /** HEAD of /testbed: baseCommit, or the commit on top of it with `secondCommit`. */
  head: string;
}

/**
 * Writes the layout under `dir` (tags `v1` and `alias`, the same manifest). The env of the config
 * sets FROM_IMAGE=yes; the stand-in conda at /opt/miniconda3 has an environment `testbed` whose
 * activation (conda.sh's `conda activate`, as the real one does) exports CONDA_DEFAULT_ENV and
 * puts envs/testbed/bin first on PATH (after `condaDelayS` seconds, to catch a create mid-lookup).
 * `secondCommit` adds a commit on top of the contract's (README.md gets a line "second commit");
 * `env` adds entries to the config's Env.
 */
export function writeTinyImage(
  dir: string,
  options: {
    condaDelayS?: number;
    secondCommit?: boolean;
    passwd?: Array<{ name: string; uid: number; home: string }>;
    env?: string[];
    python3?: string;
  } = {},
): TinyImage {
  const base = join(dir, 'layer1');
  const upper = join(dir, 'layer2');
  const layout = join(dir, 'layout');
  mkdirSync(join(base, 'usr', 'bin'), { recursive: true });
  for (const program of PROGRAMS) copyWithLibraries(program, base);
  symlinkSync('usr/bin', join(base, 'bin'));
  for (const folder of [
    'etc',
    'tmp',
    'opt/dropme/inner',
    'opt/miniconda3/bin',
    'opt/miniconda3/etc/profile.d',
    'opt/miniconda3/envs/testbed/bin',
  ])
    mkdirSync(join(base, folder), { recursive: true });
  // `passwd`: an /etc/passwd with these users, and their home folders.
  if (options.passwd) {
    writeFileSync(
      join(base, 'etc', 'passwd'),
      options.passwd.map((user) => `${user.name}:x:${user.uid}:${user.uid}::${user.home}:/usr/bin/bash\n`).join(''),
    );
    for (const user of options.passwd) mkdirSync(join(base, user.home), { recursive: true });
  }
  // `python3`: a stand-in /usr/bin/python3 (a script), which the local provider takes for its exec agent's python.
  if (options.python3 !== undefined) writeFileSync(join(base, 'usr', 'bin', 'python3'), options.python3, { mode: 0o755 });
  writeFileSync(join(base, 'etc', 'gone.txt'), 'deleted by the upper layer\n');
  writeFileSync(join(base, 'etc', 'kept.txt'), 'kept\n');
  // A folder the image locks (mode 000, a file inside): unpacking and setuid clearing must cope.
  // Only root can tar such a folder up.
  mkdirSync(join(base, 'opt', 'locked'), { recursive: true });
  writeFileSync(join(base, 'opt', 'locked', 'secret'), 'locked\n');
  if (process.getuid?.() === 0) chmodSync(join(base, 'opt', 'locked'), 0o000);
  writeFileSync(join(base, 'usr', 'bin', 'setuid-tool'), '#!/usr/bin/bash\nid -u\n');
  chmodSync(join(base, 'usr', 'bin', 'setuid-tool'), 0o6755);
  writeFileSync(join(base, 'opt', 'dropme', 'inner', 'file'), 'deleted with its folder\n');
  writeFileSync(
    join(base, 'opt', 'miniconda3', 'bin', 'conda'),
    '#!/usr/bin/bash\necho "stand-in conda: use the shell function" >&2\nexit 1\n',
    { mode: 0o755 },
  );
  writeFileSync(
    join(base, 'opt', 'miniconda3', 'etc', 'profile.d', 'conda.sh'),
    [
      'conda() {',
      '  if [ "$1" = activate ]; then',
      ...(options.condaDelayS ? [`    sleep ${options.condaDelayS}`] : []),
      '    export CONDA_DEFAULT_ENV="$2" CONDA_PREFIX="/opt/miniconda3/envs/$2"',
      '    export PATH="/opt/miniconda3/envs/$2/bin:$PATH"',
      '  fi',
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(base, 'opt', 'miniconda3', 'envs', 'testbed', 'bin', 'in-testbed'),
    '#!/usr/bin/bash\necho "from the testbed environment"\n',
    { mode: 0o755 },
  );
  const testbed = join(base, 'testbed');
  mkdirSync(testbed);
  const baseCommit = makeContractRepo(testbed);
  let head = baseCommit;
  if (options.secondCommit) {
    writeFileSync(join(testbed, 'README.md'), `${readFileSync(join(testbed, 'README.md'), 'utf8')}second commit\n`);
    const git = (...args: string[]): string =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: testbed, encoding: 'utf8' }).trim();
    git('commit', '-qam', 'second');
    head = git('rev-parse', 'HEAD');
  }
  // The upper layer: whiteouts for a file and a whole folder (image-spec layer.md), one new file.
  mkdirSync(join(upper, 'etc'), { recursive: true });
  mkdirSync(join(upper, 'opt'), { recursive: true });
  writeFileSync(join(upper, 'etc', '.wh.gone.txt'), '');
  writeFileSync(join(upper, 'opt', '.wh.dropme'), '');
  writeFileSync(join(upper, 'etc', 'added.txt'), 'added by the upper layer\n');

  mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true });
  const blob = (data: Buffer | string): { digest: string; size: number } => {
    const hex = sha256(data);
    writeFileSync(join(layout, 'blobs', 'sha256', hex), data);
    return { digest: `sha256:${hex}`, size: Buffer.byteLength(data) };
  };
  const layers = [base, upper].map((folder) => {
    const tar = join(dir, `${folder.endsWith('1') ? 'layer1' : 'layer2'}.tar`);
    execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=2026-01-01', '-C', folder, '-cf', tar, '.']);
    const data = readFileSync(tar);
    rmSync(tar);
    return { ...blob(data), diffId: `sha256:${sha256(data)}` };
  });
  const config = blob(
    JSON.stringify({
      architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
      os: 'linux',
      config: { Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'FROM_IMAGE=yes', ...(options.env ?? [])], WorkingDir: '/testbed' },
      rootfs: { type: 'layers', diff_ids: layers.map((layer) => layer.diffId) },
    }),
  );
  const manifest = blob(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: layers.map((layer) => ({ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layer.digest, size: layer.size })),
    }),
  );
  const entry = (tag: string) => ({
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    ...manifest,
    annotations: { 'org.opencontainers.image.ref.name': tag },
  });
  writeFileSync(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [entry('v1'), entry('alias')] }));
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  rmSync(base, { recursive: true, force: true });
  rmSync(upper, { recursive: true, force: true });
  return { layout, reference: `oci:${layout}:v1`, baseCommit, head };
}

/**
 * A skopeo that logs its subcommand to `log` and runs the real one (to count pulls); the real
 * program is what runs, so the wire behaviour is skopeo's own.
 */
export function countingSkopeo(dir: string): { path: string; calls(): string[] } {
  const log = join(dir, 'skopeo.log');
  const path = join(dir, 'skopeo');
  writeFileSync(path, `#!/bin/sh\necho "$1" >> ${log}\nexec ${hostPath('skopeo')} "$@"\n`, { mode: 0o755 });
  return { path, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) };
}
