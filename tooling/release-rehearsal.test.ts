// The release rehearsal (release-rehearsal.mjs) as a test, so every change keeps the packages
// publishable: `changeset version` in a temporary copy gives each published package a release
// version (0.1.0 for the first release) and a CHANGELOG, and each packed tarball holds no test,
// fixture or foreign source map and no `workspace:` range. The packages are built first (turbo
// builds this package's workspace dependencies before its tests).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rehearseRelease, releaseTable } from './release-rehearsal.mjs';
import { workspacePackages } from './workspace.mjs';

describe('the release rehearsal', () => {
  it('versions and packs every published package cleanly', () => {
    // packInto: the tarballs the consumer test installs, kept after the copy is removed.
    const tarballs = mkdtempSync(join(tmpdir(), 'ctxgraph-rehearsal-test-'));
    const { packages, problems } = rehearseRelease({ packInto: tarballs });
    console.log(releaseTable(packages));
    expect(problems).toEqual([]);
    const published = workspacePackages().filter(({ manifest }) => manifest.private !== true);
    expect(packages.map(({ name }) => name)).toEqual(
      published.map(({ manifest }) => manifest.name),
    );
    for (const item of packages) {
      expect(item.entries).toContain('dist/index.js');
      expect(item.entries).toContain('dist/index.d.ts');
      expect(item.tarball === undefined ? false : existsSync(item.tarball)).toBe(true);
      expect(basename(item.tarball ?? '')).toMatch(new RegExp(`-${item.version}\\.tgz$`));
    }
    rmSync(tarballs, { recursive: true, force: true }); // kept on failure, to look at
    // It builds and packs every package: minutes on a busy machine (133 s at a load of 40).
  }, 600_000);
});
