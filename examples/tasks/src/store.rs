//! The task file: every task in one JSON file, read and written whole on each change. Shared
//! word for word by the server on mcp-fusion and its rmcp original, so that they differ only
//! in what serves the tools.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How urgent a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Some day.
    Low,
    /// The default.
    #[default]
    Normal,
    /// First.
    High,
}

/// One task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    /// The task's id, from 1.
    pub id: u64,
    /// What is to be done.
    pub title: String,
    /// Free notes.
    #[serde(default)]
    pub notes: String,
    /// How urgent it is.
    #[serde(default)]
    pub priority: Priority,
    /// When it is due, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// Whether it is done.
    #[serde(default)]
    pub done: bool,
}

/// A list of tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskList {
    /// The tasks, by id.
    pub tasks: Vec<Task>,
}

/// The fields of a task a change sets; `None` leaves one as it is.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// A new title.
    pub title: Option<String>,
    /// New notes.
    pub notes: Option<String>,
    /// A new priority.
    pub priority: Option<Priority>,
    /// A new due date.
    pub due: Option<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct File {
    next_id: u64,
    tasks: Vec<Task>,
}

/// Why the store could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No task has this id.
    #[error("no task has id {0}")]
    NotFound(u64),
    /// A due date that is not `YYYY-MM-DD`.
    #[error("the due date {0:?} is not a date like 2026-12-31")]
    BadDue(String),
    /// A title with nothing in it.
    #[error("the title is empty")]
    EmptyTitle,
    /// The file could not be read or written.
    #[error("the task file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file holds something that is not a task list.
    #[error("the task file {path} is not a task list: {source}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        source: serde_json::Error,
    },
}

/// The tasks kept in one file.
pub struct Store {
    path: PathBuf,
    lock: Mutex<()>,
}

impl Store {
    /// The store of the file at `path` (created on the first change).
    pub fn open(path: impl Into<PathBuf>) -> Store {
        Store { path: path.into(), lock: Mutex::new(()) }
    }

    /// Adds a task.
    pub fn create(
        &self,
        title: &str,
        notes: Option<String>,
        priority: Option<Priority>,
        due: Option<String>,
    ) -> Result<Task, StoreError> {
        self.change(|file| {
            let title = checked_title(title)?;
            file.next_id += 1;
            let task = Task {
                id: file.next_id,
                title,
                notes: notes.unwrap_or_default(),
                priority: priority.unwrap_or_default(),
                due: checked_due(due)?,
                done: false,
            };
            file.tasks.push(task.clone());
            Ok(task)
        })
    }

    /// The tasks, done ones only when asked, of one priority when given.
    pub fn list(&self, include_done: bool, priority: Option<Priority>) -> Result<TaskList, StoreError> {
        let file = self.read()?;
        let tasks = file
            .tasks
            .into_iter()
            .filter(|task| include_done || !task.done)
            .filter(|task| priority.is_none_or(|p| task.priority == p))
            .collect();
        Ok(TaskList { tasks })
    }

    /// One task.
    pub fn get(&self, id: u64) -> Result<Task, StoreError> {
        self.read()?.tasks.into_iter().find(|task| task.id == id).ok_or(StoreError::NotFound(id))
    }

    /// Sets the fields `changes` gives.
    pub fn update(&self, id: u64, changes: Changes) -> Result<Task, StoreError> {
        self.change(|file| {
            let task = file.tasks.iter_mut().find(|task| task.id == id).ok_or(StoreError::NotFound(id))?;
            if let Some(title) = changes.title {
                task.title = checked_title(&title)?;
            }
            if let Some(notes) = changes.notes {
                task.notes = notes;
            }
            if let Some(priority) = changes.priority {
                task.priority = priority;
            }
            if changes.due.is_some() {
                task.due = checked_due(changes.due)?;
            }
            Ok(task.clone())
        })
    }

    /// Marks a task done.
    pub fn complete(&self, id: u64) -> Result<Task, StoreError> {
        self.change(|file| {
            let task = file.tasks.iter_mut().find(|task| task.id == id).ok_or(StoreError::NotFound(id))?;
            task.done = true;
            Ok(task.clone())
        })
    }

    /// Deletes a task.
    pub fn delete(&self, id: u64) -> Result<Task, StoreError> {
        self.change(|file| {
            let at = file.tasks.iter().position(|task| task.id == id).ok_or(StoreError::NotFound(id))?;
            Ok(file.tasks.remove(at))
        })
    }

    /// The tasks whose title or notes hold `query` (any case), at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Result<TaskList, StoreError> {
        let query = query.to_lowercase();
        let holds =
            |task: &Task| task.title.to_lowercase().contains(&query) || task.notes.to_lowercase().contains(&query);
        let tasks = self.read()?.tasks.into_iter().filter(holds).take(limit).collect();
        Ok(TaskList { tasks })
    }

    fn read(&self) -> Result<File, StoreError> {
        read_file(&self.path)
    }

    /// Reads the file, applies `edit`, and writes it back when `edit` succeeds.
    fn change<T>(&self, edit: impl FnOnce(&mut File) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let _one_at_a_time = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut file = self.read()?;
        let done = edit(&mut file)?;
        let text = serde_json::to_vec_pretty(&file)
            .map_err(|source| StoreError::Corrupt { path: self.path.clone(), source })?;
        // Written aside and renamed: a crash leaves the old file or the new one, never half.
        let aside = self.path.with_extension("json.new");
        let io = |source| StoreError::Io { path: self.path.clone(), source };
        std::fs::write(&aside, text).map_err(io)?;
        std::fs::rename(&aside, &self.path).map_err(io)?;
        Ok(done)
    }
}

fn read_file(path: &Path) -> Result<File, StoreError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|source| StoreError::Corrupt { path: path.to_owned(), source })
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(source) => Err(StoreError::Io { path: path.to_owned(), source }),
    }
}

fn checked_title(title: &str) -> Result<String, StoreError> {
    let title = title.trim();
    if title.is_empty() { Err(StoreError::EmptyTitle) } else { Ok(title.to_owned()) }
}

fn checked_due(due: Option<String>) -> Result<Option<String>, StoreError> {
    let Some(due) = due else { return Ok(None) };
    let bytes = due.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let shaped =
        bytes.len() == 10 && bytes[4] == b'-' && bytes[7] == b'-' && digits(0..4) && digits(5..7) && digits(8..10);
    let month = due.get(5..7).and_then(|m| m.parse::<u8>().ok());
    let day = due.get(8..10).and_then(|d| d.parse::<u8>().ok());
    if shaped && month.is_some_and(|m| (1..=12).contains(&m)) && day.is_some_and(|d| (1..=31).contains(&d)) {
        Ok(Some(due))
    } else {
        Err(StoreError::BadDue(due))
    }
}
