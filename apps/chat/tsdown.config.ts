import { defineConfig, type UserConfig } from 'tsdown';

/**
 * Bundles the chat app's server (the client is built by Vite into dist/client).
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
  // Everything from node_modules stays an import: dependencies are installed beside the app, and
  // Vite (a dev dependency) is only loaded by the --dev server.
  deps: { skipNodeModulesBundle: true },
});

export default config;
