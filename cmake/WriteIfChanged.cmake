# write_if_changed(PATH CONTENT): writes a generated file only when its bytes change, so an unchanged
# input triggers no rebuild of what includes it (EmbedPresets.cmake, ConstantNames.cmake).
function(write_if_changed path content)
    if(EXISTS "${path}")
        file(READ "${path}" previous)
        if(previous STREQUAL content)
            return()
        endif()
    endif()
    file(WRITE "${path}" "${content}")
endfunction()
