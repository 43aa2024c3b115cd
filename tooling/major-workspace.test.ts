// refreshCopy, the second install's copy of the checkout (major-workspace.mjs): after a refresh the
// copy holds the checkout's files as they are now (changed ones copied, removed ones deleted, new
// ones added, modes kept), and what the copy made itself (its install, its build) stays.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { refreshCopy } from './major-workspace.mjs';

const folder = mkdtempSync(join(tmpdir(), 'ctxgraph-major-copy-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const source = join(folder, 'checkout');
const target = join(folder, 'copy');

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

function git(args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@invalid', ...args], {
    cwd: source,
    stdio: 'ignore',
  });
}

describe('refreshCopy', () => {
  it("makes the copy hold the checkout's files as they are now, and keeps what the copy built", () => {
    write(source, '.gitignore', 'node_modules/\ndist/\n');
    write(source, 'package.json', '{ "name": "checkout" }\n');
    write(source, 'packages/a/src/index.ts', 'export const a = 1;\n');
    write(source, 'packages/b/src/index.ts', 'export const b = 1;\n');
    write(source, 'run', '#!/bin/sh\n');
    chmodSync(join(source, 'run'), 0o755);
    write(source, 'node_modules/ignored/index.js', 'the checkout’s own install\n');
    git(['init', '-q']);
    git(['add', '-A']);
    git(['commit', '-q', '-m', 'first']);

    expect(refreshCopy(source, target)).toBe(5);
    expect(readFileSync(join(target, 'packages/a/src/index.ts'), 'utf8')).toBe(
      'export const a = 1;\n',
    );
    expect(statSync(join(target, 'run')).mode & 0o777).toBe(0o755);
    expect(existsSync(join(target, 'node_modules'))).toBe(false);
    expect(existsSync(join(target, '.git'))).toBe(true);

    // The copy's own install and build, then the checkout changes (uncommitted, as in a session).
    write(target, 'node_modules/.modules.yaml', 'the copy’s install\n');
    write(target, 'packages/a/dist/index.js', 'built\n');
    write(source, 'packages/a/src/index.ts', 'export const a = 2;\n');
    rmSync(join(source, 'packages/b'), { recursive: true });
    write(source, 'packages/c/src/index.ts', 'export const c = 1;\n');
    chmodSync(join(source, 'run'), 0o644);

    expect(refreshCopy(source, target)).toBe(4);
    expect(readFileSync(join(target, 'packages/a/src/index.ts'), 'utf8')).toBe(
      'export const a = 2;\n',
    );
    expect(existsSync(join(target, 'packages/b/src/index.ts'))).toBe(false);
    expect(readFileSync(join(target, 'packages/c/src/index.ts'), 'utf8')).toBe(
      'export const c = 1;\n',
    );
    expect(statSync(join(target, 'run')).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(target, 'node_modules/.modules.yaml'), 'utf8')).toBe(
      'the copy’s install\n',
    );
    expect(readFileSync(join(target, 'packages/a/dist/index.js'), 'utf8')).toBe('built\n');

    expect(refreshCopy(source, target)).toBe(0);
  });
});
