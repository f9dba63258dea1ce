# The PyPI wheels of the ROS message packages (the no-ROS-install route) export the Python include
# directory of the machine that built them; CMake refuses to generate with a non-existent path in an
# imported target. inertial_id_drop_stale_include_dirs() keeps only the directories that exist on
# every imported *__rosidl_generator_py target of the calling directory. A ROS install is unaffected
# (its paths exist). Used by this package's CMakeLists.txt, and (as CMAKE_PROJECT_INCLUDE, deferred
# to the end of configuration) by the test-only builds of other interface packages in the Makefile.
function(inertial_id_drop_stale_include_dirs)
  get_directory_property(_targets IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    if(NOT _target MATCHES "__rosidl_generator_py$")
      continue()
    endif()
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(_dirs)
      set(_existing "")
      foreach(_dir IN LISTS _dirs)
        if(EXISTS "${_dir}" OR _dir MATCHES "^\\$<")
          list(APPEND _existing "${_dir}")
        endif()
      endforeach()
      set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_existing}")
    endif()
  endforeach()
endfunction()

if(INERTIAL_ID_DEFER_INCLUDE_FIX)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL inertial_id_drop_stale_include_dirs)
endif()
