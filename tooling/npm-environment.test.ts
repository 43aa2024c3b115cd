// npmEnvironment: an npm started from a pnpm script prints no "Unknown env config" warning for
// pnpm's own npm_config_* variables, and still reads the npm settings the user set.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { npmEnvironment } from './npm-environment.mjs';

const project = mkdtempSync(join(tmpdir(), 'ctxgraph-npm-environment-'));
writeFileSync(join(project, 'package.json'), '{ "name": "empty", "private": true }\n');
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** What pnpm sets for the scripts it runs (pnpm 10), and settings a user may have given npm. */
const fromPnpmScript = {
  npm_config_verify_deps_before_run: 'false',
  npm_config_link_workspace_packages: 'true',
  npm_config_recursive: '',
  npm_config__jsr_registry: 'https://npm.jsr.io/',
  npm_config_npm_globalconfig: '/etc/npmrc',
  npm_config_registry: 'https://registry.npmjs.org/',
  'npm_config_@acme:registry': 'https://npm.acme.example/',
  'npm_config_//npm.acme.example/:_authToken': 'secret-token',
  npm_config_fund: 'false',
};

function npm(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync('npm', args, { cwd: project, encoding: 'utf8', env });
}

describe('npmEnvironment', () => {
  it("drops the npm_config_* variables npm does not know: no 'Unknown env config' warning", () => {
    const raw = { ...process.env, ...fromPnpmScript };
    // What npm printed before: one warning per variable it does not know.
    const before = npm(['ls'], raw);
    expect(before.stderr).toContain('Unknown env config "verify-deps-before-run"');
    expect(before.stderr).toContain('Unknown env config "_jsr-registry"');

    const after = npm(['ls'], npmEnvironment(raw));
    expect(after.status).toBe(0);
    expect(after.stderr).not.toContain('Unknown env config');
  });

  it('keeps the settings npm knows, scoped registries and per-registry ones', () => {
    const env = npmEnvironment({ ...process.env, ...fromPnpmScript });
    expect(env.npm_config_registry).toBe('https://registry.npmjs.org/');
    expect(env['npm_config_@acme:registry']).toBe('https://npm.acme.example/');
    expect(env['npm_config_//npm.acme.example/:_authToken']).toBe('secret-token');
    expect(env.npm_config_fund).toBe('false');
    expect(env.npm_config_verify_deps_before_run).toBeUndefined();
    expect(env.npm_config__jsr_registry).toBeUndefined();
    expect(npm(['config', 'get', '@acme:registry'], env).stdout.trim()).toBe(
      'https://npm.acme.example/',
    );
  });

  it('leaves every other variable as it is', () => {
    const env = npmEnvironment({ PATH: '/bin', CI: 'true', npm_config_recursive: 'true' });
    expect(env).toEqual({ PATH: '/bin', CI: 'true' });
  });
});
