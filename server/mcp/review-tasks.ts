import { randomUUID } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type Request, type RequestId, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';

interface Entry {
  task: Task;
  /** The client sent a task-augmented tools/call and will poll; otherwise the SDK made the task to serve a plain call. */
  askedFor: boolean;
  result?: Result;
  /** Stops the wait behind the task: the client cancelled it, or the session ended. */
  wait: AbortController;
  expiry?: NodeJS.Timeout;
}

const TERMINAL = new Set<Task['status']>(['completed', 'failed', 'cancelled']);

/**
 * The tasks of one MCP session (the SDK keeps one server, so one store, per session).
 *
 * The SDK runs a plain call of a tool that supports tasks by creating a task too, then answers
 * the call with that task's result. Those tasks stay out of `tasks/list` and are forgotten as
 * soon as the SDK has read their result; only tasks a client asked for are kept, for
 * `resultKeptMs` after they end.
 */
export class ReviewTasks implements TaskStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly resultKeptMs: number) {}

  async createTask(options: CreateTaskOptions, _requestId: RequestId, request: Request): Promise<Task> {
    const now = new Date().toISOString();
    const task: Task = { taskId: randomUUID(), status: 'working', ttl: this.resultKeptMs, createdAt: now, lastUpdatedAt: now, pollInterval: options.pollInterval };
    this.entries.set(task.taskId, { task, askedFor: request.params?.task !== undefined, wait: new AbortController() });
    return { ...task };
  }

  /** Whether the client asked for this task, and so will poll it, rather than waiting for a plain answer. */
  askedFor(taskId: string): boolean {
    return this.entries.get(taskId)?.askedFor ?? false;
  }

  /** Aborts when the client cancels the task or the session ends (aborted already if either happened). */
  waitSignal(taskId: string): AbortSignal {
    return this.entries.get(taskId)?.wait.signal ?? AbortSignal.abort();
  }

  async getTask(taskId: string): Promise<Task | null> {
    const entry = this.entries.get(taskId);
    return entry ? { ...entry.task } : null;
  }

  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result): Promise<void> {
    const entry = this.live(taskId);
    entry.result = result;
    this.end(entry, status);
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const entry = this.entries.get(taskId);
    if (!entry?.result) throw new McpError(ErrorCode.InvalidParams, `task ${taskId} has no result (${entry?.task.status ?? 'no such task'})`);
    if (!entry.askedFor) this.forget(taskId);
    return entry.result;
  }

  async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string): Promise<void> {
    const entry = this.live(taskId);
    if (statusMessage !== undefined) entry.task.statusMessage = statusMessage;
    if (TERMINAL.has(status)) this.end(entry, status);
    else entry.task = { ...entry.task, status, lastUpdatedAt: new Date().toISOString() };
    if (status === 'cancelled') entry.wait.abort();
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[] }> {
    // One page: a session's tasks are few, and each is gone `resultKeptMs` after it ends.
    if (cursor !== undefined) throw new Error(`unknown cursor ${JSON.stringify(cursor)}`);
    return { tasks: [...this.entries.values()].filter((entry) => entry.askedFor).map((entry) => ({ ...entry.task })) };
  }

  forget(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (!entry) return;
    clearTimeout(entry.expiry);
    entry.wait.abort();
    this.entries.delete(taskId);
  }

  /** The session ended: every wait stops and every task is gone. */
  close(): void {
    for (const taskId of [...this.entries.keys()]) this.forget(taskId);
  }

  private live(taskId: string): Entry {
    const entry = this.entries.get(taskId);
    if (!entry) throw new Error(`task ${taskId} does not exist`);
    if (TERMINAL.has(entry.task.status)) throw new Error(`task ${taskId} has already ended (${entry.task.status})`);
    return entry;
  }

  private end(entry: Entry, status: Task['status']): void {
    entry.task = { ...entry.task, status, lastUpdatedAt: new Date().toISOString() };
    entry.expiry = setTimeout(() => this.forget(entry.task.taskId), this.resultKeptMs);
    entry.expiry.unref();
  }
}
