// The types of the CodeMirror bundle editor.js (built from frontend/src/editor.js), for the front end's type
// check (`make lint`: tsc reads this file instead of the minified bundle, which is not ours to check).

/** What mountEditor is told: the text, the callbacks and the words around the editor. */
export interface EditorOptions {
  doc?: string;
  onRun?: () => void;
  onChange?: (text: string) => void;
  label?: string;
  keysHelp?: string;
  stylesheet?: string;
}

/** The mounted editor. */
export interface MountedEditor {
  view: unknown;
  host: HTMLElement;
  getValue(): string;
  setValue(text: string): void;
  focus(): void;
  markError(lineNumber: number, message: string): void;
  clearErrors(): void;
}

export function mountEditor(textarea: HTMLTextAreaElement, options?: EditorOptions): Promise<MountedEditor>;
