import { runSeedCommand } from './seed-command';

// `pnpm --filter @ctxgraph/playground seed -- --messages 2000`: a long chat in the playground's
// store, and the address that opens it (see the README's "A long chat").
runSeedCommand(process.argv.slice(2), process.env).then(
  (lines) => {
    for (const line of lines) console.log(line);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
