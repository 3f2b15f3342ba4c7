/**
 * How long a decision waits before it is sent. Until then nobody has received it, so Undo
 * truly takes it back; a busy reviewer gets a moment to catch a wrong click.
 */
export const UNDO_WINDOW_MS = 5_000;
