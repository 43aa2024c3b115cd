import { defineConfig, type UserConfig } from 'tsdown';

/**
 * Bundles the playground's server (the client is built by Vite into dist/client). Dependencies
 * stay external: they are installed beside the app.
 */
const config: UserConfig = defineConfig({
  entry: { main: 'src/server/main.ts' },
  outDir: 'dist/server',
  format: ['esm'],
  platform: 'node',
  target: 'node20.19',
  fixedExtension: false,
  dts: false,
  sourcemap: true,
  clean: true,
});

export default config;
