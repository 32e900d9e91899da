// The code editor of the lesson page: CodeMirror 6 with Python highlighting.
// build.mjs bundles this file (and CodeMirror) into src/qkv/web/static/vendor/editor.js,
// which lesson.js imports; the page never loads anything from a CDN.
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState, Prec } from "@codemirror/state";
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { classHighlighter } from "@lezer/highlight";

// A small, calm setup for a lesson: line numbers, undo history, bracket help and Python indentation,
// and a lint gutter that marks the line of a syntax error the grader reports. No completion pop-ups or
// search panel (CodeMirror's basicSetup has them; a learner writing short functions does not need them,
// and leaving them out keeps the bundle smaller).
const lessonSetup = [
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  history(),
  drawSelection(),
  indentOnInput(),
  bracketMatching(),
  closeBrackets(),
  highlightActiveLine(),
  lintGutter(),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
];

/**
 * Replace a <textarea> with a CodeMirror editor and keep the textarea's value in sync. Resolves once the
 * editor is on the page with its stylesheet applied; until then the textarea stays, and stays usable.
 *
 * @param {HTMLTextAreaElement} textarea  the server-rendered fallback; it stays in the DOM, hidden.
 * @param {{doc?: string, onRun?: () => void, onChange?: (text: string) => void, label?: string,
 *   keysHelp?: string, stylesheet?: string}} options
 *   doc: the initial text (defaults to the textarea's value once the stylesheet is there);
 *   onRun: called on Ctrl/⌘+Enter;
 *   onChange: called with the new text after each edit;
 *   label: accessible name of the editing area;
 *   keysHelp: a sentence shown under the editor and read out when it gets focus (its accessible
 *     description), e.g. how to leave it with the keyboard;
 *   stylesheet: URL of a stylesheet to load inside the editor's shadow root, before the editor is shown.
 * @returns {Promise<{view: EditorView, host: HTMLElement, getValue: () => string,
 *   setValue: (text: string) => void, focus: () => void, markError: (line: number, message: string) => void,
 *   clearErrors: () => void}>}
 */
export async function mountEditor(textarea, options = {}) {
  const { host, shadow } = await styledHost(textarea, options.stylesheet);
  // Everything from here to the end runs in one task: the first frame that paints the editor has its styles.
  const state = EditorState.create({ doc: options.doc ?? textarea.value, extensions: editorExtensions(textarea, options) });
  host.style.display = "";
  const view = new EditorView({ state, parent: shadow, root: shadow });
  if (options.keysHelp) {
    // In the shadow root with the editor, so that aria-describedby can point at it.
    const help = document.createElement("p");
    help.id = "cm-keys-help";
    help.className = "cm-keys-help";
    help.textContent = options.keysHelp;
    shadow.append(help);
  }
  textarea.hidden = true;
  textarea.value = state.doc.toString();
  return {
    view,
    host,
    getValue: () => view.state.doc.toString(),
    setValue: (text) => {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    focus: () => view.focus(),
    // Underline a line (1-based) with an error diagnostic and mark it in the gutter; the message shows on hover.
    markError: (lineNumber, message) => {
      const doc = view.state.doc;
      const line = doc.line(Math.min(Math.max(1, Math.trunc(lineNumber)), doc.lines));
      const diagnostic = { from: line.from, to: line.to, severity: "error", message, source: "Python" };
      view.dispatch(setDiagnostics(view.state, [diagnostic]));
    },
    clearErrors: () => view.dispatch(setDiagnostics(view.state, [])),
  };
}

/**
 * The editor's host after the textarea, hidden, with a shadow root whose stylesheet has loaded (or failed to:
 * the editor then works with CodeMirror's own theme). The editor lives in a shadow root: CodeMirror then
 * installs its own styles as constructed stylesheets, which a Content-Security-Policy of style-src 'self'
 * allows (a <style> tag it forbids).
 *
 * Why wait: a <link> in a shadow root does not hold back rendering as one in the document's <head> does.
 * An editor created beside a stylesheet still on its way was painted with CodeMirror's theme alone: its
 * gutter rows at CodeMirror's 14 px guess a line while the code's lines were 22 px, so on a phone (where
 * the editor loads below the fold and is not measured) the line numbers drifted 8 px a line off their
 * lines until the stylesheet came, which on a slow phone or network is long enough to see.
 *
 * @param {HTMLTextAreaElement} textarea
 * @param {string | undefined} href
 * @returns {Promise<{host: HTMLElement, shadow: ShadowRoot}>}
 */
async function styledHost(textarea, href) {
  const host = document.createElement("div");
  host.className = "cm-host";
  const shadow = host.attachShadow({ mode: "open" });
  // In the document (a stylesheet loads only there) but not shown: the textarea is the editor until then.
  host.style.display = "none";
  textarea.insertAdjacentElement("afterend", host);
  if (href) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    const loaded = new Promise((resolve) => {
      link.addEventListener("load", resolve, { once: true });
      link.addEventListener("error", resolve, { once: true });
    });
    shadow.append(link);
    await loaded;
  }
  return { host, shadow };
}

/** The editor's extensions: the lesson setup, Python, the Run keys, the content's attributes, and the sync. */
function editorExtensions(textarea, options) {
  const runKeys = Prec.highest(
    keymap.of([
      {
        key: "Mod-Enter",
        run: () => {
          if (options.onRun) options.onRun();
          return true;
        },
      },
    ]),
  );
  // Tab indents inside the editor; Escape then Tab leaves it (CodeMirror's escape hatch for keyboard users:
  // after Escape, the next Tab or Shift+Tab within 2 s moves focus), and Ctrl+M (Alt+Shift+M on macOS)
  // turns Tab indentation off and on. keysHelp says so under the editor and on focus.
  // tabindex 0 says aloud what the contenteditable already is, a stop in the Tab order: axe's
  // scrollable-region-focusable rule then finds the scroller holds a focusable control (it does not
  // count a contenteditable as one), and the Tab order is unchanged.
  const content = { "aria-label": options.label ?? "Python code editor", tabindex: "0" };
  if (options.keysHelp) content["aria-describedby"] = "cm-keys-help";
  return [
    runKeys,
    lessonSetup,
    python(),
    // Stable tok-* class names, coloured by lesson.css for light and dark schemes alike.
    syntaxHighlighting(classHighlighter),
    indentUnit.of("    "),
    EditorState.tabSize.of(4),
    EditorView.contentAttributes.of(content),
    EditorView.updateListener.of((update) => {
      if (!update.docChanged) return;
      textarea.value = update.state.doc.toString();
      if (options.onChange) options.onChange(textarea.value);
    }),
  ];
}
