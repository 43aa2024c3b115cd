// `pnpm test:consumer`: the packages as a user gets them. The release rehearsal versions and packs
// every package in a temporary copy (real versions, no `workspace:` ranges); then, for each AI SDK
// lane, a new project in the OS temp directory (outside the workspace: no workspace links, no
// hoisting) installs the tarballs with plain `npm install`, as the root README's install line
// says, with `ai@6` on Node 20 and `ai@7` on Node 22 (a Node the machine lacks comes from the
// npm registry, see tooling/node-runtime.mjs). There it measures the install footprint, runs the
// READMEs' examples (the root README's, and the AI SDK integration's once packages/ai-sdk
// exists: `consumerReadmes`), type-checks a small app under `strict` with `nodenext` and with
// `bundler` resolution, runs it, and checks that exactly one copy of `ai` is installed.
//
// better-sqlite3 is a native addon whose prebuilt binaries come from GitHub, which some machines
// cannot reach: the project gets the workspace's build for its Node through prebuild-install's
// own local-prebuilds setting (npm_config_better_sqlite3_local_prebuilds), so `npm install` runs
// the package's install script as usual without compiling, and better-sqlite3 is pinned (npm
// `overrides`) to the workspace's version, the one those builds are for.
//
// Options: `--lane 6` or `--lane 7` (default: both), `--node <major>` (another Node for the lane,
// 24 say; at least the lane's own), `--keep` (leave the projects on disk).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lanes } from '../ai-lane/lane.mjs';
import { betterSqliteBuild, type NodeRuntime, nodeRuntime } from '../node-runtime.mjs';
import {
  expectedOutput,
  installedPackages,
  packageOf,
  readmePrograms,
  runReadmeProgram,
} from '../readme-examples.ts';
import { type PackedPackage, rehearseRelease } from '../release-rehearsal.mjs';
import { root } from '../workspace.mjs';

type Lane = '6' | '7';

/**
 * READMEs whose install lines the consumer project follows and whose examples it runs, in order.
 * An entry whose `requires` folder does not exist yet is skipped (the AI SDK integration, while
 * it is being written); add a package's README here to run its examples from the tarballs too.
 */
export const consumerReadmes: readonly { readme: string; requires?: string }[] = [
  { readme: 'README.md' },
  { readme: 'packages/ai-sdk/README.md', requires: 'packages/ai-sdk/package.json' },
];

/** The packages whose install footprint is measured, without and then with a tokenizer. */
export const footprintPackages: readonly string[] = [
  '@ctxgraph/engine',
  '@ctxgraph/codecs',
  '@ctxgraph/store-sqlite',
  '@ctxgraph/renderer-xml',
  'ai',
];
const footprintTokenizer = '@ctxgraph/tokenizer-o200k';

/** What one lane measured and found. */
interface LaneResult {
  readonly lane: Lane;
  readonly node: string;
  readonly ai: string;
  readonly footprint: { packages: number; megabytes: number; withTokenizer: Footprint };
  readonly problems: string[];
}

interface Footprint {
  readonly packages: number;
  readonly megabytes: number;
}

function npmCli(): string {
  const globalRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
  const cli = join(globalRoot, 'npm', 'bin', 'npm-cli.js');
  if (!existsSync(cli)) throw new Error(`npm's CLI is not at ${cli}.`);
  return cli;
}

/** Runs npm with `runtime`'s Node (install scripts too: its folder leads PATH). */
function npm(runtime: NodeRuntime, args: string[], cwd: string, environment = {}): string {
  const result = spawnSync(runtime.node, [npmCli(), ...args], {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      ...environment,
      PATH: `${dirname(runtime.node)}:${process.env.PATH ?? ''}`,
      npm_config_nodedir: runtime.home,
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** The @ctxgraph packages `names` need (dependencies and peers, transitively), names included. */
function withSiblings(names: readonly string[], packed: ReadonlyMap<string, PackedPackage>) {
  const needed = new Set<string>();
  const visit = (name: string): void => {
    if (needed.has(name) || !packed.has(name)) return;
    needed.add(name);
    const folder = packed.get(name)?.folder ?? '';
    const manifest = JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8'));
    for (const field of ['dependencies', 'peerDependencies']) {
      for (const dependency of Object.keys(manifest[field] ?? {})) visit(dependency);
    }
  };
  for (const name of names) visit(name);
  return [...needed];
}

/**
 * The major of each AI SDK companion package that goes with an AI SDK major, for install lines
 * that name one (the AI SDK integration's README may name `@ai-sdk/react`, say).
 */
const companions: Readonly<Record<Lane, Readonly<Record<string, string>>>> = {
  '6': { ai: '6', '@ai-sdk/openai': '3', '@ai-sdk/react': '3' },
  '7': { ai: '7', '@ai-sdk/openai': '4', '@ai-sdk/react': '4' },
};

/** The install arguments for `names`: tarballs for ours, the lane's major for the AI SDK's. */
function installArguments(
  names: readonly string[],
  packed: ReadonlyMap<string, PackedPackage>,
  lane: Lane,
): string[] {
  const ours = withSiblings(names, packed).map((name) => packed.get(name)?.tarball as string);
  const others = names
    .filter((name) => !packed.has(name))
    .map((name) => {
      const major = companions[lane][name];
      return major === undefined ? name : `${name}@${major}`;
    });
  return [...ours, ...others];
}

/** Installed packages (every folder with a package.json under node_modules, nested ones too). */
function installedPackageFolders(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const folder = join(nodeModules, entry);
    const candidates = entry.startsWith('@')
      ? readdirSync(folder).map((inner) => join(folder, inner))
      : [folder];
    for (const candidate of candidates) {
      if (!existsSync(join(candidate, 'package.json'))) continue;
      found.push(candidate);
      found.push(...installedPackageFolders(join(candidate, 'node_modules')));
    }
  }
  return found;
}

function footprint(project: string): Footprint {
  const nodeModules = join(project, 'node_modules');
  const kilobytes = Number(
    execFileSync('du', ['-sk', nodeModules], { encoding: 'utf8' }).split(/\s/)[0],
  );
  return {
    packages: installedPackageFolders(nodeModules).length,
    megabytes: Math.round((kilobytes / 1024) * 10) / 10,
  };
}

/** A folder with better-sqlite3's prebuilt archive for `runtime`, as prebuild-install names it. */
function localPrebuilds(runtime: NodeRuntime, into: string): { version: string; folder: string } {
  const store = join(root, 'node_modules', '.pnpm');
  const entry = readdirSync(store).find((name) => name.startsWith('better-sqlite3@'));
  if (entry === undefined) throw new Error('the workspace has no better-sqlite3 installed.');
  const packageFolder = join(store, entry, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8'));
  const built = betterSqliteBuild(packageFolder, runtime);
  const staging = join(into, 'staging');
  mkdirSync(join(staging, 'build', 'Release'), { recursive: true });
  execFileSync('cp', [built, join(staging, 'build', 'Release', 'better_sqlite3.node')]);
  const folder = join(into, 'prebuilds');
  mkdirSync(folder, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${runtime.abi}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(folder, name), '-C', staging, 'build']);
  return { version, folder };
}

const appSource = `import { assistant, user } from '@ctxgraph/codecs';
import { ContextEngine, type ModelResolveResult } from '@ctxgraph/engine';
import { hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { message } from '@ctxgraph/codecs';
import { simulateReadableStream, streamText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

const model = new MockLanguageModelV3({
  doStream: async () => ({
    stream: simulateReadableStream({
      chunks: [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello from a stream.' },
        { type: 'text-end', id: 't' },
        {
          type: 'finish',
          finishReason: { unified: 'stop', raw: undefined },
          usage: {
            inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: 4, text: 4, reasoning: undefined },
          },
        },
      ],
    }),
  }),
});

/** One streamed turn, its system-role message folded into \`system\` by the engine. */
export async function answer(question: string): Promise<string> {
  const engine = new ContextEngine({
    store: new SqliteContextStore(':memory:'),
    chatId: 'consumer-chat',
    userId: 'consumer-user',
    renderer: new XmlRenderer(),
  });
  engine.set(role('You are terse.'), hint('One sentence.'));
  engine.set(message({ id: 's1', role: 'system', parts: [{ type: 'text', text: 'Be kind.' }] }));
  engine.set(user(question, { id: 'q1' }));
  const resolved: ModelResolveResult = await engine.resolve({ format: 'model' });
  const result = streamText({ model, system: resolved.system, messages: resolved.messages });
  const text: string = await result.text;
  engine.set(assistant(text));
  await engine.save();
  return text;
}

console.log(await answer('Say hello'));
`;

function tsconfig(resolution: 'nodenext' | 'bundler'): string {
  const compilerOptions =
    resolution === 'nodenext'
      ? { module: 'nodenext', moduleResolution: 'nodenext' }
      : { module: 'preserve', moduleResolution: 'bundler' };
  return `${JSON.stringify(
    {
      compilerOptions: {
        ...compilerOptions,
        strict: true,
        target: 'es2022',
        lib: ['es2023'],
        types: ['node'],
        noEmit: true,
        skipLibCheck: false,
      },
      include: ['app/**/*.ts'],
    },
    null,
    2,
  )}\n`;
}

async function runLane(
  lane: Lane,
  packed: ReadonlyMap<string, PackedPackage>,
  keep: boolean,
  nodeMajor: number = lanes[lane].node,
): Promise<LaneResult> {
  if (nodeMajor < lanes[lane].node) {
    throw new Error(`AI SDK ${lane} needs Node ${lanes[lane].node} or newer, not ${nodeMajor}.`);
  }
  const runtime = nodeRuntime(nodeMajor);
  const problems: string[] = [];
  const project = mkdtempSync(join(tmpdir(), `ctxgraph-consumer-ai${lane}-`));
  if (!relative(root, project).startsWith('..')) {
    throw new Error(`the consumer project ${project} is inside the workspace.`);
  }
  console.log(`\n=== AI SDK ${lane} on Node ${runtime.version}: ${project}`);
  const prebuildsFolder = mkdtempSync(join(tmpdir(), 'ctxgraph-prebuilds-'));
  try {
    const prebuilds = localPrebuilds(runtime, prebuildsFolder);
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify(
        {
          name: 'ctxgraph-consumer',
          private: true,
          type: 'module',
          overrides: { 'better-sqlite3': prebuilds.version },
        },
        null,
        2,
      )}\n`,
    );
    const environment = { npm_config_better_sqlite3_local_prebuilds: prebuilds.folder };
    const install = (names: readonly string[]): void => {
      const args = installArguments(names, packed, lane);
      console.log(`npm install ${names.join(' ')}`);
      npm(runtime, ['install', ...args], project, environment);
    };

    // The root README's install line first, alone: its footprint is the figure users see.
    const readmes = consumerReadmes.filter(
      (entry) => entry.requires === undefined || existsSync(join(root, entry.requires)),
    );
    const rootLine = installedPackages(readFileSync(join(root, 'README.md'), 'utf8'));
    if (rootLine.length === 0) problems.push('README.md has no `npm install` line.');
    for (const name of footprintPackages) {
      if (!rootLine.includes(name)) problems.push(`README.md's install line lacks ${name}.`);
    }
    install(rootLine);
    const base = footprint(project);
    install([footprintTokenizer]);
    const withTokenizer = footprint(project);
    for (const { readme } of readmes.slice(1)) {
      install(installedPackages(readFileSync(join(root, readme), 'utf8')));
    }
    // What the examples import beyond the install lines (another store, say), as a user adds it.
    const present = new Set(
      installedPackageFolders(join(project, 'node_modules')).map(
        (folder) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).name as string,
      ),
    );
    const imported = readmes.flatMap(({ readme }) =>
      readmePrograms(readFileSync(join(root, readme), 'utf8')).flatMap((program) =>
        program.imports.map(packageOf),
      ),
    );
    const missing = [...new Set(imported)].filter(
      (name): name is string => name !== undefined && !present.has(name),
    );
    if (missing.length > 0) install(missing);

    const aiFolders = installedPackageFolders(join(project, 'node_modules')).filter(
      (folder) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).name === 'ai',
    );
    const aiVersions = aiFolders.map(
      (folder) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).version as string,
    );
    if (aiFolders.length !== 1) {
      problems.push(`expected one copy of ai, found ${aiFolders.length}: ${aiFolders.join(', ')}`);
    }
    if (!aiVersions.every((version) => version.startsWith(`${lane}.`))) {
      problems.push(`expected ai ${lane}.x, found ${aiVersions.join(', ')}`);
    }
    try {
      npm(runtime, ['ls', 'ai', '--all'], project);
    } catch (error) {
      problems.push(`npm ls ai --all: ${(error as Error).message}`);
    }

    // The checks' own tools come last, so they are not counted in the footprint.
    npm(
      runtime,
      ['install', '--save-dev', 'typescript@6.0.3', 'tsx@4', `@types/node@${lanes[lane].node}`],
      project,
      environment,
    );
    const requireFromProject = createRequire(join(project, 'package.json'));
    const tsx = pathToFileURL(requireFromProject.resolve('tsx')).href;

    for (const { readme } of readmes) {
      const programs = readmePrograms(readFileSync(join(root, readme), 'utf8'));
      if (programs.length === 0) problems.push(`${readme} has no runnable example.`);
      for (const program of programs) {
        const where = `${readme}, example at line ${program.line}`;
        const outcome = await runReadmeProgram(program, {
          packageFolder: project,
          node: runtime.node,
          preload: [tsx],
          timeoutMs: 120_000,
        });
        const printed = outcome.stdout.trim().split('\n').filter(Boolean);
        const expected = expectedOutput(program);
        if (outcome.exitCode !== 0 || outcome.stderr !== '') {
          problems.push(`${where} failed (exit ${outcome.exitCode}):\n${outcome.stderr}`);
        } else if (JSON.stringify(printed) !== JSON.stringify(expected)) {
          problems.push(
            `${where} printed ${JSON.stringify(printed)}, not ${JSON.stringify(expected)}`,
          );
        } else {
          console.log(`ok   ${where}`);
        }
        mkdirSync(join(project, 'app'), { recursive: true });
        const file = `${readme.replace(/[^a-z0-9]+/gi, '-')}-line-${program.line}.ts`;
        writeFileSync(join(project, 'app', file), `${program.code}\nexport {};\n`);
      }
    }

    mkdirSync(join(project, 'app'), { recursive: true });
    writeFileSync(join(project, 'app', 'app.ts'), appSource);
    const tsc = requireFromProject.resolve('typescript/bin/tsc');
    for (const resolution of ['nodenext', 'bundler'] as const) {
      writeFileSync(join(project, `tsconfig.${resolution}.json`), tsconfig(resolution));
      const check = spawnSync(runtime.node, [tsc, '-p', `tsconfig.${resolution}.json`], {
        cwd: project,
        encoding: 'utf8',
      });
      // skipLibCheck is off so our declarations are checked as a user's compiler reads them;
      // the errors inside the AI SDK's own declarations (they assume the DOM lib and
      // @types/json-schema) are not ours to fix: counted and shown, not failed on.
      const errors = `${check.stdout}${check.stderr}`
        .split('\n')
        .filter((line) => /^\S.*\(\d+,\d+\): error /.test(line));
      const theirs = errors.filter(
        (line) => line.startsWith('node_modules/') && !line.startsWith('node_modules/@ctxgraph/'),
      );
      const ours = errors.filter((line) => !theirs.includes(line));
      if (check.status !== 0 && errors.length === 0) {
        problems.push(`tsc (strict, ${resolution}) failed:\n${check.stdout}${check.stderr}`);
      } else if (ours.length > 0) {
        problems.push(`tsc (strict, ${resolution}) failed:\n${ours.join('\n')}`);
      } else {
        const note =
          theirs.length === 0
            ? ''
            : ` (${theirs.length} errors inside third-party declarations, not ours: ${[
                ...new Set(theirs.map((line) => line.replace(/\(.*/, ''))),
              ].join(', ')})`;
        console.log(
          `ok   the app and the README examples type-check (strict, ${resolution})${note}`,
        );
      }
    }
    const app = spawnSync(runtime.node, ['--import', tsx, join('app', 'app.ts')], {
      cwd: project,
      encoding: 'utf8',
    });
    if (app.status !== 0 || app.stdout.trim() !== 'Hello from a stream.') {
      problems.push(
        `the app (streamText with the engine's system) failed:\n${app.stdout}${app.stderr}`,
      );
    } else {
      console.log('ok   the app streams a reply with the folded system message');
    }
    if (problems.length === 0) console.log(`ok   exactly one ai (${aiVersions[0]})`);
    return {
      lane,
      node: runtime.version,
      ai: aiVersions.join(', '),
      footprint: { ...base, withTokenizer },
      problems,
    };
  } finally {
    rmSync(prebuildsFolder, { recursive: true, force: true });
    if (keep) console.log(`kept ${project}`);
    else rmSync(project, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const laneFlag = argv.indexOf('--lane');
  const chosen = laneFlag === -1 ? undefined : argv[laneFlag + 1];
  const nodeFlag = argv.indexOf('--node');
  const nodeMajor = nodeFlag === -1 ? undefined : Number(argv[nodeFlag + 1]);
  if (
    (chosen !== undefined && chosen !== '6' && chosen !== '7') ||
    (nodeMajor !== undefined && !Number.isInteger(nodeMajor))
  ) {
    console.error('usage: pnpm test:consumer [--lane 6|7] [--node <major>] [--keep]');
    process.exit(2);
  }
  const toRun: Lane[] = chosen === undefined ? ['6', '7'] : [chosen];
  const tarballs = mkdtempSync(join(tmpdir(), 'ctxgraph-tarballs-'));
  try {
    const rehearsal = rehearseRelease({ packInto: tarballs });
    if (rehearsal.problems.length > 0) {
      for (const problem of rehearsal.problems) console.error(problem);
      process.exit(1);
    }
    const packed = new Map(rehearsal.packages.map((item) => [item.name, item]));
    const results: LaneResult[] = [];
    for (const lane of toRun) {
      results.push(await runLane(lane, packed, argv.includes('--keep'), nodeMajor));
    }
    console.log('\nInstall footprint (packages / MB on disk under node_modules):');
    console.log(`| Lane | ${footprintPackages.join(' + ')} | + ${footprintTokenizer} |`);
    console.log('| --- | ---: | ---: |');
    for (const { node, ai, footprint: size } of results) {
      console.log(
        `| ai ${ai} on Node ${node} | ${size.packages} / ${size.megabytes} MB | ${size.withTokenizer.packages} / ${size.withTokenizer.megabytes} MB |`,
      );
    }
    const problems = results.flatMap((result) =>
      result.problems.map((problem) => `AI SDK ${result.lane}: ${problem}`),
    );
    for (const problem of problems) console.error(`FAILED ${problem}`);
    console.log(
      problems.length === 0
        ? `consumer test: passed on ${results.map((result) => `ai ${result.ai} / Node ${result.node}`).join(' and ')}`
        : `consumer test: ${problems.length} problems`,
    );
    process.exitCode = problems.length === 0 ? 0 : 1;
  } finally {
    rmSync(tarballs, { recursive: true, force: true });
  }
}

await main();
