--[[
Public API of openprogram.nvim: `setup()` and the functions behind the user commands.
Modules are required lazily so that startup costs nothing until the panel is used.

  require('openprogram').setup({ model = 'openai:gpt-4o', panel = { position = 'right', width = 60 } })
  require('openprogram').open('explain this repository')
]]

local M = {}

--- The plugin's version: the server release it was made with (`openprogram-lsp --version`);
--- `:checkhealth openprogram` says whether the server that runs matches it.
M.version = '0.1.0'

local did_setup = false

--- Configure the plugin (optional: defaults apply without it).
---@param opts? openprogram.Opts
function M.setup(opts)
  local cfg = require('openprogram.config').setup(opts)
  require('openprogram.pickers').keymaps(cfg.keymaps)
  if not did_setup then
    require('openprogram.idle') -- counts keys from now on (prompts wait until the user is idle)
    require('openprogram.chat').setup_progress()
    require('openprogram.blame').setup()
    local panel = require('openprogram.panel')
    panel.note_highlight()
    vim.api.nvim_create_autocmd('ColorScheme', {
      group = vim.api.nvim_create_augroup('openprogram.notes', { clear = true }),
      callback = panel.note_highlight,
    })
    did_setup = true
  end
end

local function ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- Open or focus the panel; with text, send it as a message.
---@param text? string
function M.open(text)
  ensure_setup()
  local panel = require('openprogram.panel')
  if text and vim.trim(text) ~= '' then
    panel.open(true)
    require('openprogram.slash').submit(text) -- `:OpenProgram /undo` runs the command
  else
    panel.focus_input() -- in Insert mode, as <leader>oo opens it
    if not require('openprogram.client').ensure() then
      panel.note('the openprogram server did not start (see :checkhealth openprogram)')
    end
    panel.update_winbar() -- "starting…" until the server answers initialize
  end
end

--- `:'<,'>OpenProgram [text]`: attach lines (and their diagnostics); send them with `text`.
---@param line1 integer
---@param line2 integer
---@param text? string
function M.open_range(line1, line2, text)
  ensure_setup()
  require('openprogram.attach').send_range(line1, line2, text or '')
end

--- `:OpenProgramImage [file]`: attach an image file (none: the clipboard's) to the next message.
---@param path string
function M.image(path)
  ensure_setup()
  require('openprogram.attach').attach_image(path)
end

--- Attach the symbol under the cursor, or with `query` a workspace symbol (`:OpenProgramSymbol`).
---@param query? string
---@param done? fun(item: table?)
function M.symbol(query, done)
  ensure_setup()
  require('openprogram.symbols').command(query, done)
end

--- Send a message on the panel's session.
---@param text string
---@param extra? table more openprogram/chat params
function M.send(text, extra)
  ensure_setup()
  require('openprogram.chat').send(text, extra)
end

--- Open the panel (focusing the input) or close it when it is open.
function M.toggle()
  ensure_setup()
  require('openprogram.panel').toggle()
end

--- Pick (or set) the model of the next turns.
---@param model? string
function M.model(model)
  ensure_setup()
  require('openprogram.pickers').pick_model(model)
end

--- Pick (or set) the permission mode.
---@param mode? string
function M.mode(mode)
  ensure_setup()
  require('openprogram.pickers').pick_mode(mode)
end

--- Cancel the running turn.
function M.cancel()
  require('openprogram.chat').cancel()
end

--- Fork from the message under the cursor (asks for the text when none is given).
---@param text? string
function M.fork(text)
  ensure_setup()
  require('openprogram.branches').fork(nil, text ~= '' and text or nil)
end

--- Pick a branch and check it out.
function M.branches()
  ensure_setup()
  require('openprogram.branches').pick_branch()
end

--- Browse sessions (this workspace first): open, rename, delete.
---@param opts? {all?: boolean}
function M.sessions(opts)
  ensure_setup()
  if not require('openprogram.client').ensure() then
    return
  end
  require('openprogram.sessions').open(opts)
end

--- Name (or rename) the active branch; asks when no name is given.
---@param name? string
function M.name_branch(name)
  ensure_setup()
  require('openprogram.branches').name_active(name)
end

--- Pick a checkpoint and open its diff.
function M.checkpoints()
  ensure_setup()
  require('openprogram.checkpoints').pick()
end

--- Restore a checkpoint (some paths, or all).
---@param id string
---@param paths? string[]
function M.restore(id, paths)
  ensure_setup()
  require('openprogram.checkpoints').restore(id, paths)
end

--- Undo a turn's file changes (a checkpoint id, default the newest turn of the panel's session).
---@param id? string
function M.undo(id)
  ensure_setup()
  require('openprogram.checkpoints').undo_turn(id)
end

--- Subscribe to a session (picked when no id is given) and show it live in the panel.
---@param sid? string
function M.watch(sid)
  ensure_setup()
  require('openprogram.watch').watch(sid)
end

--- List the approval rules and revoke one.
function M.rules()
  ensure_setup()
  require('openprogram.rules').pick()
end

--- The session shown in the panel, if any.
---@return string?
function M.session_id()
  return require('openprogram.panel').state.session_id
end

--- Compare the active branch's code with another branch's, in diff tabs.
function M.branch_diff()
  ensure_setup()
  require('openprogram.code').pick_diff()
end

--- Undo the last branch switch that changed files (files back, then the head).
function M.undo_switch()
  ensure_setup()
  require('openprogram.code').undo_switch()
end

return M
