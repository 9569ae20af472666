#!/usr/bin/env node
// Copies the non-TypeScript assets that code under src/ loads at run time (serialization
// templates: src/**/*.yaml, *.yml; the local sandbox's exec agent: *.py) to the same place under
// dist/, since tsc emits only .js.
// Usage: node scripts/copy-assets.mjs [sourceDir=src] [targetDir=dist/src]
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ASSET_EXTENSIONS = new Set(['.yaml', '.yml', '.py']);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = resolve(root, process.argv[2] ?? 'src');
const target = resolve(root, process.argv[3] ?? join('dist', 'src'));

function* assets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* assets(path);
    else if (entry.isFile() && ASSET_EXTENSIONS.has(extname(entry.name))) yield path;
  }
}

let copied = 0;
for (const file of assets(source)) {
  const destination = join(target, relative(source, file));
  mkdirSync(dirname(destination), { recursive: true });
  copyFileSync(file, destination);
  copied += 1;
}
console.log(`copy-assets: ${copied} file(s) from ${relative(root, source) || '.'} to ${relative(root, target) || '.'}`);
