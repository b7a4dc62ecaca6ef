"""The request pipeline: one attempt, retries around it, streaming assembly."""
