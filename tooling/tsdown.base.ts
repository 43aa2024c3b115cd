import { defineConfig, type UserConfig } from 'tsdown';

/**
 * The one build every published ctxgraph package uses: ESM only, declarations with maps, and
 * publint + attw as gates that fail the build on any problem.
 */
export function libraryBuild(overrides: UserConfig = {}): UserConfig {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm'],
    platform: 'neutral',
    target: 'node20.19',
    fixedExtension: false,
    dts: { sourcemap: true },
    sourcemap: true,
    clean: true,
    publint: { level: 'suggestion', strict: true },
    attw: { profile: 'esm-only', level: 'error' },
    ...overrides,
  });
}
