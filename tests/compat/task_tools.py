"""The task agent of seed 001, shared by its adapter tests and its end-to-end program: the Gemini key and
the application's tool registry."""

from __future__ import annotations

from typing import Any

KEY = "AIzaSyTESTKEY_0123456789abcdefghij"

# "Full Tool Registry", as the seed writes it
TOOL_DECLARATIONS: list[dict[str, Any]] = [
    {
        "name": "add_task",
        "description": "Create a new task. Use when user wants to add, create, or remember something.",
        "parameters": {
            "type": "object",
            "properties": {"description": {"type": "string", "description": "Task description"}},
            "required": ["description"],
        },
    },
    {
        "name": "list_tasks",
        "description": "Get user's tasks. Use when user wants to see, view, or list their tasks.",
        "parameters": {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["pending", "completed", "all"],
                    "description": "Filter by status (default: all)",
                }
            },
        },
    },
    {
        "name": "update_task",
        "description": "Update a task's description. Use when user wants to change, edit, or rename a task.",
        "parameters": {
            "type": "object",
            "properties": {
                "task_id": {"type": "string", "description": "Task ID to update"},
                "description": {"type": "string", "description": "New description"},
            },
            "required": ["task_id", "description"],
        },
    },
    {
        "name": "complete_task",
        "description": "Mark a task as completed. Use when user says done, finished, or completed.",
        "parameters": {
            "type": "object",
            "properties": {"task_id": {"type": "string", "description": "Task ID to complete"}},
            "required": ["task_id"],
        },
    },
    {
        "name": "delete_task",
        "description": "Delete a task permanently. Use when user wants to remove or delete a task.",
        "parameters": {
            "type": "object",
            "properties": {"task_id": {"type": "string", "description": "Task ID to delete"}},
            "required": ["task_id"],
        },
    },
]
