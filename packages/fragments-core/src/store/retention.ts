// The records of the optional retention ability (`capabilities.retention`): prune.

/** Input of `ContextStore.prune`. */
export interface PruneInput {
  /** The chat. */
  readonly chatId: string;
  /**
   * Branches to delete in the same write, before reachability is worked out: their pointers go,
   * and so does every node that only they reached. Each must exist; no name twice.
   * @default none
   */
  readonly deleteBranches?: readonly string[];
  /**
   * The branch that becomes active when `deleteBranches` holds the active one (required then, and
   * must be a branch that stays). Refused when the active branch is not being deleted.
   */
  readonly activate?: string;
  /** Work out and report what would go, and change nothing. @default false */
  readonly dryRun?: boolean;
}

/** What `ContextStore.prune` removed (or, with `dryRun`, would remove). */
export interface PruneResult {
  /** The chat. */
  readonly chatId: string;
  /** True when nothing was changed. */
  readonly dryRun: boolean;
  /** The message nodes removed: those no branch head and no checkpoint reaches. */
  readonly nodes: number;
  /** The UTF-8 bytes of those nodes' stored message JSON. */
  readonly bytes: number;
  /** The branches deleted (the `deleteBranches` asked for, in that order). */
  readonly branches: readonly string[];
  /** The chat's active branch afterwards (or, with `dryRun`, as it would be). */
  readonly activeBranch: string;
}
