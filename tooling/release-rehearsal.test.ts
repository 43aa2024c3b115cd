// The release rehearsal (release-rehearsal.mjs) as a test, so every change keeps the packages
// publishable: `changeset version` in a temporary copy gives each published package a release
// version (0.1.0 for the first release) and a CHANGELOG, and each packed tarball holds no test,
// fixture or foreign source map and no `workspace:` range. The packages are built first (turbo
// builds this package's workspace dependencies before its tests).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rootInstallLine } from './readme-install.mjs';
import { rehearseRelease, releaseTable, tarballInstallLine } from './release-rehearsal.mjs';
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

    // What `--out` prints: the root README's install line from the tarballs, with every
    // @ctxgraph package those need (npm would look for a missing one on the registry).
    const [npm, install, ...words] = tarballInstallLine(
      rootInstallLine(),
      packages,
      tarballs,
    ).split(' ');
    expect([npm, install]).toEqual(['npm', 'install']);
    const listed = words.filter((word) => word.startsWith(`${tarballs}/`));
    for (const path of listed) expect(existsSync(path)).toBe(true);
    const names = new Set(
      packages.filter((item) => listed.includes(item.tarball ?? '')).map(({ name }) => name),
    );
    expect(names).toContain('@ctxgraph/serialization');
    for (const name of names) {
      const item = packages.find((packed) => packed.name === name);
      for (const sibling of item?.siblings ?? []) expect(names).toContain(sibling);
    }
    expect(words.filter((word) => !listed.includes(word))).toEqual(
      rootInstallLine().filter((name) => !name.startsWith('@ctxgraph/')),
    );
    rmSync(tarballs, { recursive: true, force: true }); // kept on failure, to look at
    // It builds and packs every package: minutes on a busy machine (133 s at a load of 40).
  }, 600_000);
});
